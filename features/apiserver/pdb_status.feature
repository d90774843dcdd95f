@apiserver
Feature: PodDisruptionBudget status
  The disruption controller computes what a budget allows (reference/fake-apiserver-semantics.md §2):
  how many Pods it expects, how many must stay healthy, how many are healthy, and so how many
  disruptions it allows. Evictions trust that status, so a stale one is visible to them.

  Background:
    Given a Node "n1" that is Ready

  @API_PDB_001 @must
  Scenario Outline: An integer minAvailable is the number of Pods that must stay healthy
    Given a Deployment "web" with <replicas> replicas labelled "app=web"
    When a PodDisruptionBudget "web-pdb" with minAvailable <min> selecting "app=web" is created
    Then the PodDisruptionBudget "web-pdb" reports expectedPods <expected>, desiredHealthy <desired>, currentHealthy <healthy> and disruptionsAllowed <allowed>

    Examples:
      | case          | replicas | min | expected | desired | healthy | allowed |
      | below-scale   | 3        | 2   | 3        | 2       | 3       | 1       |
      | equal-scale   | 3        | 3   | 3        | 3       | 3       | 0       |
      | above-scale   | 3        | 5   | 3        | 5       | 3       | 0       |
      | zero          | 2        | 0   | 2        | 0       | 2       | 2       |

  @API_PDB_002 @must
  Scenario Outline: A percentage minAvailable is taken of the workload's scale, rounded up
    Given a Deployment "web" with <replicas> replicas labelled "app=web"
    When a PodDisruptionBudget "web-pdb" with minAvailable <min> selecting "app=web" is created
    Then the PodDisruptionBudget "web-pdb" reports expectedPods <expected>, desiredHealthy <desired>, currentHealthy <healthy> and disruptionsAllowed <allowed>

    Examples:
      | case          | replicas | min  | expected | desired | healthy | allowed |
      | half-of-three | 3        | 50%  | 3        | 2       | 3       | 1       |
      | tenth-of-four | 4        | 10%  | 4        | 1       | 4       | 3       |
      | all           | 4        | 100% | 4        | 4       | 4       | 0       |

  @API_PDB_003 @must
  Scenario Outline: maxUnavailable is subtracted from the workload's scale, a percentage rounded up
    Given a Deployment "web" with <replicas> replicas labelled "app=web"
    When a PodDisruptionBudget "web-pdb" with maxUnavailable <max> selecting "app=web" is created
    Then the PodDisruptionBudget "web-pdb" reports expectedPods <expected>, desiredHealthy <desired>, currentHealthy <healthy> and disruptionsAllowed <allowed>

    Examples:
      | case              | replicas | max | expected | desired | healthy | allowed |
      | one               | 3        | 1   | 3        | 2       | 3       | 1       |
      | percent-rounds-up | 3        | 34% | 3        | 1       | 3       | 2       |
      | quarter-of-ten    | 10       | 25% | 10       | 7       | 10      | 3       |
      | more-than-scale   | 2        | 5   | 2        | 0       | 2       | 2       |

  @API_PDB_004 @must
  Scenario Outline: Only Ready Pods that are not being deleted count as healthy
    Given 3 running Pods labelled "app=web" on Node "n1"
    And a Pod "default/web-3" labelled "app=web" that is <state>
    When a PodDisruptionBudget "web-pdb" with minAvailable 2 selecting "app=web" is created
    Then the PodDisruptionBudget "web-pdb" reports expectedPods 4, desiredHealthy 2, currentHealthy <healthy> and disruptionsAllowed <allowed>

    Examples:
      | case        | state       | healthy | allowed |
      | ready       | Ready       | 4       | 2       |
      | not-ready   | not Ready   | 3       | 1       |
      | terminating | terminating | 3       | 1       |
      | succeeded   | Succeeded   | 3       | 1       |

  @API_PDB_005 @must
  Scenario Outline: Pods without a controller count only for an integer minAvailable
    Given 3 running Pods labelled "app=solo" on Node "n1"
    When a PodDisruptionBudget "solo-pdb" with <budget> selecting "app=solo" is created
    Then the PodDisruptionBudget "solo-pdb" reports expectedPods <expected>, desiredHealthy <desired>, currentHealthy 3 and disruptionsAllowed <allowed>

    Examples:
      | case            | budget              | expected | desired | allowed |
      | integer-minimum | minAvailable 2      | 3        | 2       | 1       |
      | percent-minimum | minAvailable 50%    | 0        | 0       | 0       |
      | maximum         | maxUnavailable 1    | 0        | 0       | 0       |

  @API_PDB_006 @should
  Scenario: A budget that needs the scale of Pods without a controller warns about them
    Given 3 running Pods labelled "app=solo" on Node "n1"
    When a PodDisruptionBudget "solo-pdb" with maxUnavailable 1 selecting "app=solo" is created
    Then a Warning event "UnmanagedPods" is recorded for the PodDisruptionBudget "solo-pdb"

  @API_PDB_007 @must
  Scenario Outline: The DisruptionAllowed condition says whether a disruption is allowed
    Given 3 running Pods labelled "app=web" on Node "n1"
    When a PodDisruptionBudget "web-pdb" with minAvailable <min> selecting "app=web" is created
    Then the PodDisruptionBudget "web-pdb" has the condition "DisruptionAllowed" "<status>" with reason "<reason>"
    And the PodDisruptionBudget "web-pdb" has observed its generation

    Examples:
      | case        | min | status | reason           |
      | allowed     | 2   | True   | SufficientPods   |
      | not-allowed | 3   | False  | InsufficientPods |

  @API_PDB_008 @must
  Scenario: A budget over DaemonSet Pods that needs their scale fails to sync and allows nothing
    Given a DaemonSet "agent" with 2 running Pods labelled "app=agent" on Node "n1"
    When a PodDisruptionBudget "agent-pdb" with maxUnavailable 1 selecting "app=agent" is created
    Then the PodDisruptionBudget "agent-pdb" has the condition "DisruptionAllowed" "False" with reason "SyncFailed" and message "daemonsets.apps does not implement the scale subresource"
    And the PodDisruptionBudget "agent-pdb" allows 0 disruptions

  @API_PDB_009 @must
  Scenario Outline: A Pod recorded as disrupted stops counting as healthy for two minutes
    Given 3 running Pods labelled "app=web" on Node "n1"
    And a PodDisruptionBudget "web-pdb" with minAvailable 1 selecting "app=web"
    And the PodDisruptionBudget "web-pdb" has recorded the Pod "web-0" as disrupted
    When <seconds> seconds pass
    Then the PodDisruptionBudget "web-pdb" reports expectedPods 3, desiredHealthy 1, currentHealthy <healthy> and disruptionsAllowed <allowed>
    And the PodDisruptionBudget "web-pdb" <record>

    Examples:
      | case    | seconds | healthy | allowed | record                                 |
      | within  | 119     | 2       | 1       | records the Pod "web-0" as disrupted   |
      | expired | 121     | 3       | 2       | records no disrupted Pods              |

  @API_PDB_010 @should
  Scenario: A disruption that did not lead to a deletion is reported when it expires
    Given 3 running Pods labelled "app=web" on Node "n1"
    And a PodDisruptionBudget "web-pdb" with minAvailable 1 selecting "app=web"
    And the PodDisruptionBudget "web-pdb" has recorded the Pod "web-0" as disrupted
    When 121 seconds pass
    Then a Warning event "NotDeleted" is recorded for the Pod "default/web-0"

  @API_PDB_011 @must
  Scenario: A budget's status goes stale while the disruption controller is switched off
    Given a Deployment "web" with 3 replicas labelled "app=web"
    And a PodDisruptionBudget "web-pdb" with minAvailable 2 selecting "app=web"
    And the disruption controller is switched off
    When the PodDisruptionBudget "web-pdb" is changed to minAvailable 1
    Then the PodDisruptionBudget "web-pdb" has generation 2 and observedGeneration 1
    And the PodDisruptionBudget "web-pdb" allows 1 disruption
