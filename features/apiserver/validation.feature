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
