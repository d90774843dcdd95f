@apiserver
Feature: Validation of writes
  The API server refuses invalid objects with 422 Invalid, naming each field and why, in the words
  of Kubernetes 1.32; a refused write changes nothing (reference/fake-apiserver-semantics.md §5.4,
  §5.11, §2.3).

  @API_VALID_001 @must
  Scenario: An object name must be a lowercase DNS subdomain
    When a ConfigMap "default/Bad_Name" is created
    Then the write is refused with 422 "Invalid" and the message:
      """
      ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')
      """

  @API_VALID_002 @must
  Scenario Outline: Each kind's name follows its own rule
    When a <kind> "<name>" is created
    Then the write is refused with 422 "Invalid"
    And the refusal names the field "metadata.name" as "<detail>"

    Examples:
      | case              | kind      | name          | detail                                                                                                         |
      | namespace-dots    | Namespace | my.shop       | must not contain dots                                                                                          |
      | service-digit     | Service   | default/1web  | start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?') |

  @API_VALID_003 @must
  Scenario Outline: Annotations may total at most 262144 bytes
    When a ConfigMap "default/big" with annotations of <bytes> bytes in total is created
    Then the write is <outcome>

    Examples:
      | case     | bytes  | outcome                   |
      | at-limit | 262144 | accepted                  |
      | over     | 262145 | refused with 422 "Invalid" |

  @API_VALID_004 @must
  Scenario: Annotations over the size limit are refused in the words of Kubernetes 1.32
    When a ConfigMap "default/big" with annotations of 262145 bytes in total is created
    Then the write is refused with 422 "Invalid" and the message:
      """
      ConfigMap "big" is invalid: metadata.annotations: Too long: may not be more than 262144 bytes
      """

  @API_VALID_005 @must
  Scenario Outline: Annotation keys are qualified names, checked in lower case
    When a ConfigMap "default/cfg" annotated "<key>" is created
    Then the write is <outcome>

    Examples:
      | case             | key                  | outcome                    |
      | plain            | example.com/note     | accepted                   |
      | uppercase-prefix | Example.COM/note     | accepted                   |
      | space-in-name    | example.com/bad key  | refused with 422 "Invalid" |
      | empty-prefix     | /note                | refused with 422 "Invalid" |

  @API_VALID_006 @must
  Scenario Outline: A PodDisruptionBudget's spec is checked
    When a PodDisruptionBudget "default/bad-pdb" with <budget> selecting "app=web" is created
    Then the write is refused with 422 "Invalid"
    And the refusal names the field "<field>" as "<detail>"

    Examples:
      | case       | budget                              | field               | detail                                            |
      | both-set   | minAvailable 1 and maxUnavailable 1 | spec                | minAvailable and maxUnavailable cannot be both set |
      | over-100   | minAvailable 120%                   | spec.minAvailable   | must not be greater than 100%                     |
      | negative   | maxUnavailable -1                   | spec.maxUnavailable | must be greater than or equal to 0                |

  @API_VALID_007 @must
  Scenario: A refused write changes nothing and uses no resourceVersion
    Given a ConfigMap "default/cfg"
    And the current resourceVersion of ConfigMaps is remembered
    When the ConfigMap "default/cfg" is relabelled "bad key=x"
    Then the write is refused with 422 "Invalid"
    And nothing was written
    And the ConfigMap "default/cfg" has no labels
    And the current resourceVersion of ConfigMaps is still the remembered one

  @API_VALID_008 @must
  Scenario Outline: A Job's name becomes a label value of its Pods, so it may have at most 63 characters
    When a Job "default/<name>" is created
    Then the write is <outcome>

    Examples:
      | case     | name  | outcome                    |
      | at-limit | web-7d4b9c-pre-upgrade-database-schema-migration-and-cache-warm | accepted                   |
      | over     | web-7d4b9c-pre-upgrade-database-schema-migration-and-cache-warmu | refused with 422 "Invalid" |

  @API_VALID_008 @must
  Scenario: A created Job selects its Pods by its uid and labels its Pod template with its name and uid
    When a Job "default/web-7d4b9c-pre-upgrade-database-schema-migration-and-cache-warm" is created
    Then the write is accepted
    And the Job "default/web-7d4b9c-pre-upgrade-database-schema-migration-and-cache-warm" selects its Pods by its uid and labels its Pod template with its name and uid

  @API_VALID_008 @must
  Scenario: A Job whose name is too long for a label is refused on its template's labels, and nothing is written
    When a Job "default/web-7d4b9c-pre-upgrade-database-schema-migration-and-cache-warmu" is created
    Then the write is refused with 422 "Invalid" and the message:
      """
      Job.batch "web-7d4b9c-pre-upgrade-database-schema-migration-and-cache-warmu" is invalid: spec.template.labels: Invalid value: "web-7d4b9c-pre-upgrade-database-schema-migration-and-cache-warmu": must be no more than 63 characters
      """
    And the refusal names the field "spec.template.labels" as "must be no more than 63 characters"
    And nothing was written

  @API_VALID_009 @must
  Scenario: With manualSelector a Job keeps its own selector and its Pod template's labels
    When a Job "default/migrate" with the manual selector "app=migrate" over a Pod template labelled "app=migrate" is created
    Then the write is accepted

  @API_VALID_009 @must
  Scenario Outline: A Job's own selector must match its Pod template, and needs manualSelector
    When a Job "default/migrate" with <selection> "<selector>" over a Pod template labelled "app=migrate" is created
    Then the write is refused with 422 "Invalid"
    And the refusal names the field "<field>" as "<detail>"
    And nothing was written

    Examples:
      | case            | selection           | selector    | field                         | detail                                      |
      | manual-mismatch | the manual selector | app=db      | spec.template.metadata.labels | `selector` does not match template `labels` |
      | not-manual      | the selector        | app=migrate | spec.selector                 | `selector` not auto-generated               |
