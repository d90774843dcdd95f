@machine_controller
Feature: When the machine controller skips the drain
  Seed 001 ("Machine deletion process" phase 3) skips the drain when the Machine has the annotation
  machine.cluster.x-k8s.io/exclude-node-draining, when spec.nodeDrainTimeout is set and has expired
  (unset or 0 means no timeout), or for a KubeadmControlPlane Machine whose kcp-cleanup hook is gone
  (kcp.feature). Its Note adds the cases where the Node may not be touched at all (no Node, the
  Cluster is being deleted, the last control plane Machine), and "Special cases" a Node that is gone.

  Background:
    Given a Cluster "c1" whose control plane Machine "cp-0" is running

  @seed_001 @must @MD_SKIP_001
  Scenario Outline: A Machine annotated exclude-node-draining (<what>) is deleted without a drain
    Given a running Machine "m1" annotated "machine.cluster.x-k8s.io/exclude-node-draining: <value>"
    And the Node of "m1" runs a Pod "default/web-0"
    When the Machine "m1" is deleted
    Then within 60 seconds the Machine "m1" is gone
    And the Node of "m1" was never cordoned
    And the Pod "default/web-0" is not evicted

    Examples:
      | case  | what     | value |
      | empty | no value |       |
      | true  | "true"   | true  |
      | false | "false"  | false |

  @seed_001 @must @MD_SKIP_002
  Scenario Outline: A drain blocked for longer than nodeDrainTimeout <timeout> is given up at the next retry
    Given a running Machine "m1" with:
      | setting          | value                                                                                 |
      | nodeDrainTimeout | <timeout>                                                                             |
      | annotation       | pre-terminate.delete.hook.machine.cluster.x-k8s.io/backup-files: my-backup-controller |
    And the Node of "m1" runs a Pod "default/web-0" labelled "app=web"
    And the workload cluster has a PodDisruptionBudget "default/web-pdb" with minAvailable 1 selecting "app=web"
    When the Machine "m1" is deleted
    Then the Machine "m1" moves from "DrainingNode" to "WaitingForPreTerminateHook" between <earliest> and <latest> seconds after its deletion
    And the Machine "m1" has the condition "DrainingSucceeded" "False" with reason "Draining"
    And the Pod "default/web-0" is not evicted

    Examples:
      | case | timeout | earliest | latest |
      | 30s  | 30s     | 30       | 50     |
      | 1m   | 1m      | 60       | 80     |
      | 90s  | 1m30s   | 90       | 110    |
      | 5m   | 5m      | 300      | 320    |

  @seed_001 @must @MD_SKIP_003
  Scenario: Without nodeDrainTimeout a blocked drain goes on
    Given a running Machine "m1"
    And the Node of "m1" runs a Pod "default/web-0" labelled "app=web"
    And the workload cluster has a PodDisruptionBudget "default/web-pdb" with minAvailable 1 selecting "app=web"
    And the Machine "m1" has been deleted
    When 6 hours pass
    Then the Machine "m1" is deleting with reason "DrainingNode"
    And the Pod "default/web-0" is not evicted

  @seed_001 @must @MD_SKIP_003
  Scenario: A nodeDrainTimeout of 0 means no timeout
    Given a running Machine "m1" with:
      | setting          | value |
      | nodeDrainTimeout | 0s    |
    And the Node of "m1" runs a Pod "default/web-0" labelled "app=web"
    And the workload cluster has a PodDisruptionBudget "default/web-pdb" with minAvailable 1 selecting "app=web"
    And the Machine "m1" has been deleted
    When 6 hours pass
    Then the Machine "m1" is deleting with reason "DrainingNode"
    And the Pod "default/web-0" is not evicted

  @seed_001 @must @MD_SKIP_004
  Scenario: The drain of a Node that no longer exists is skipped and counts as succeeded
    Given a running Machine "m1" annotated "pre-terminate.delete.hook.machine.cluster.x-k8s.io/backup-files: my-backup-controller"
    And the Node of "m1" has been removed from the workload cluster
    When the Machine "m1" is deleted
    Then within 60 seconds the Machine "m1" is deleting with reason "WaitingForPreTerminateHook"
    And the Machine "m1" has the condition "DrainingSucceeded" "True"

  @seed_001 @must @MD_SKIP_005
  Scenario: A Machine that never got a Node is deleted without a drain
    Given a Machine "m1" that never gets a Node
    When the Machine "m1" is deleted
    Then within 60 seconds the Machine "m1" is gone
    And the FakeMachine "m1" is gone
    And the FakeBootstrapConfig "m1" is gone
    And the Machine "m1" never reported the deletion stage "DrainingNode"

  # seeds/001_6948c2535bf9c9aa.txt "Machine deletion process" phase 2 waits for pre-drain hooks "if any are
  # registered". We follow upstream: the pre-drain wait belongs to the Node's deletion and is skipped with it.
  @seed_001 @should @MD_SKIP_006
  Scenario: A Machine that never got a Node does not wait for its pre-drain hooks
    Given a Machine "m1" that never gets a Node, annotated "pre-drain.delete.hook.machine.cluster.x-k8s.io/migrate-important-app: my-app-migration-controller"
    When the Machine "m1" is deleted
    Then within 60 seconds the Machine "m1" is gone
    And the Machine "m1" never reported the deletion stage "WaitingForPreDrainHook"

  @seed_001 @should @MD_SKIP_007
  Scenario: While the Cluster is being deleted a Machine's Node is neither drained nor deleted
    Given a running Machine "m1"
    And the Node of "m1" runs a Pod "default/web-0"
    And the Cluster "c1" is being deleted
    When the Machine "m1" is deleted
    Then within 60 seconds the Machine "m1" is gone
    And the Node of "m1" was never cordoned
    And the Pod "default/web-0" is not evicted
    And the Node of "m1" exists

  @seed_001 @should @MD_SKIP_008
  Scenario: The last control plane Machine's Node is neither drained nor deleted
    Given the Node of "cp-0" runs a Pod "default/web-0"
    When the Machine "cp-0" is deleted
    Then within 60 seconds the Machine "cp-0" is gone
    And the Node of "cp-0" was never cordoned
    And the Pod "default/web-0" is not evicted
    And the Node of "cp-0" exists
