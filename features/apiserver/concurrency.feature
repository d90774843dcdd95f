@apiserver
Feature: Optimistic concurrency, generation and the status subresource
  Writes are checked against the resourceVersion the client read; generation counts changes of
  intent; spec and status are written through separate endpoints
  (reference/fake-apiserver-semantics.md §5.5, §5.6).

  @API_CONC_001 @must
  Scenario Outline: A write of a stale copy is refused with a conflict
    Given a <kind> "default/<name>"
    And a client has read the <kind> "default/<name>"
    And the <kind> "default/<name>" has been relabelled "edited=true"
    When the client writes its copy of the <kind> "default/<name>" back
    Then the write is refused with 409 "Conflict" and the message:
      """
      Operation cannot be fulfilled on <resource> "<name>": the object has been modified; please apply your changes to the latest version and try again
      """

    Examples:
      | case   | kind                | name    | resource                         |
      | core   | ConfigMap           | cfg     | configmaps                       |
      | apps   | Deployment          | web     | deployments.apps                 |
      | policy | PodDisruptionBudget | web-pdb | poddisruptionbudgets.policy      |

  @API_CONC_002 @must
  Scenario: A built-in object written without a resourceVersion is replaced, last write wins
    Given a ConfigMap "default/cfg"
    And a client has read the ConfigMap "default/cfg"
    And the ConfigMap "default/cfg" has been relabelled "edited=true"
    When the client writes its copy of the ConfigMap "default/cfg" back without a resourceVersion, labelled "writer=client"
    Then the write is accepted
    And the ConfigMap "default/cfg" has the label "writer=client"
    And the ConfigMap "default/cfg" does not have the label "edited"

  @API_CONC_003 @must
  Scenario: A custom resource written without a resourceVersion is refused
    Given the custom resource kind "Widget" of "example.com/v1" is served, with a status subresource
    And a Widget "default/w1"
    And a client has read the Widget "default/w1"
    When the client writes its copy of the Widget "default/w1" back without a resourceVersion, labelled "writer=client"
    Then the write is refused with 422 "Invalid" and the message:
      """
      Widget.example.com "w1" is invalid: metadata.resourceVersion: Invalid value: 0x0: must be specified for an update
      """

  @API_CONC_004 @must
  Scenario: A write does not create an object that does not exist
    Given a client has a PodDisruptionBudget "default/missing" that the cluster does not have
    When the client writes its copy of the PodDisruptionBudget "default/missing" back
    Then the write is refused with 404 "NotFound" and the message:
      """
      poddisruptionbudgets.policy "missing" not found
      """

  @API_CONC_005 @must
  Scenario: A deletion on the condition of an old resourceVersion is refused with a conflict
    Given a ConfigMap "default/cfg"
    And a client has read the ConfigMap "default/cfg"
    And the ConfigMap "default/cfg" has been relabelled "edited=true"
    When the client deletes the ConfigMap "default/cfg" on the condition that it is unchanged
    Then the write is refused with 409 "Conflict", naming the resourceVersion the client read and the current one
    And the ConfigMap "default/cfg" exists

  @API_CONC_006 @must
  Scenario Outline: Generation counts changes of the spec only
    Given a Deployment "default/web"
    When the Deployment "default/web" <change>
    Then the Deployment "default/web" has generation <generation>

    Examples:
      | case   | change                           | generation |
      | spec   | is changed to 5 replicas         | 2          |
      | labels | is relabelled "tier=front"       | 1          |
      | status | reports 3 replicas in its status | 1          |

  @API_CONC_007 @must
  Scenario: Marking an object for deletion counts as a change of generation
    Given a Deployment "default/web" with the finalizer "example.com/hold"
    When the Deployment "default/web" is deleted
    Then the Deployment "default/web" is marked for deletion
    And the Deployment "default/web" has generation 2

  @API_CONC_008 @must
  Scenario Outline: Spec and status are written through separate endpoints
    Given a Deployment "default/web"
    When a client writes the Deployment "default/web" <through> with 5 replicas in its spec and 7 in its status
    Then the Deployment "default/web" has <spec> replicas in its spec and <status> in its status

    Examples:
      | case   | through            | spec | status |
      | object | through the object | 5    | 0      |
      | status | through its status | 1    | 7      |

  @API_CONC_009 @should
  Scenario: A new object starts without the status its creator sent
    When a Deployment "default/web" with 7 replicas in its status is created
    Then the Deployment "default/web" has 1 replicas in its spec and 0 in its status

  @API_CONC_010 @should
  Scenario: A write that changes nothing keeps the resourceVersion
    Given a ConfigMap "default/cfg"
    And a client has read the ConfigMap "default/cfg"
    When the client writes its copy of the ConfigMap "default/cfg" back
    Then the write is accepted
    And nothing was written
    And the ConfigMap "default/cfg" still has the resourceVersion the client read
