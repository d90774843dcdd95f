@machine_controller
Feature: Deleting the Machine's Node
  Last, the machine controller deletes the Node in the workload cluster. It retries until the Node is
  gone or spec.nodeDeletionTimeout has expired, counted from the Machine's deletion; 0 means no timeout
  and the field defaults to 10s, since cloud controller managers usually delete Nodes too (seed 001
  "Machine deletion process" phase 10). Here the Node deletion fails because the workload cluster can no
  longer be reached: its kubeconfig Secret is gone.

  Background:
    Given a Cluster "c1" whose control plane Machine "cp-0" is running

  @seed_001 @must @MD_NODE_001
  Scenario: The Machine's Node is deleted, then the Machine goes
    Given a running Machine "m1"
    When the Machine "m1" is deleted
    Then within 60 seconds the Machine "m1" is gone
    And the Node of "m1" is gone
    And the Node "m1" was removed before the Machine "m1"

  @seed_001 @must @MD_NODE_002
  Scenario: With nodeDeletionTimeout 0 a failing Node deletion is retried indefinitely
    Given a running Machine "m1" with:
      | setting             | value                                                         |
      | nodeDeletionTimeout | 0s                                                            |
      | annotation          | machine.cluster.x-k8s.io/exclude-node-draining:               |
      | annotation          | machine.cluster.x-k8s.io/exclude-wait-for-node-volume-detach: |
    And the Secret "c1-kubeconfig" has been deleted
    And the Machine "m1" has been deleted
    When 60 minutes pass
    Then the Machine "m1" is deleting with reason "DeletingNode" and the message "Error deleting Node, please check controller logs for errors"
    And the Machine "m1" has the condition "NodeHealthy" "False" with reason "DeletionFailed" and severity "Warning"
    And a Warning event "FailedDeleteNode" is recorded for the Machine "m1"
    And the FakeMachine "m1" is gone
    And the Node of "m1" exists

  @seed_001 @must @MD_NODE_003
  Scenario Outline: A failing Node deletion is given up once nodeDeletionTimeout <timeout> has expired
    Given a running Machine "m1" with:
      | setting             | value                                                         |
      | nodeDeletionTimeout | <timeout>                                                     |
      | annotation          | machine.cluster.x-k8s.io/exclude-node-draining:               |
      | annotation          | machine.cluster.x-k8s.io/exclude-wait-for-node-volume-detach: |
    And the Secret "c1-kubeconfig" has been deleted
    When the Machine "m1" is deleted
    Then the Machine "m1" is gone between <earliest> and <latest> seconds after its deletion
    And the Node of "m1" exists

    Examples:
      | case | timeout | earliest | latest |
      | 10s  | 10s     | 10       | 60     |
      | 1m   | 1m      | 60       | 180    |
      | 5m   | 5m      | 300      | 900    |

  @seed_001 @must @MD_NODE_004
  Scenario: nodeDeletionTimeout defaults to 10s
    When a Machine "m1" of the Cluster "c1" is created without a nodeDeletionTimeout
    Then the Machine "m1" has the nodeDeletionTimeout "10s"

  @seed_001 @should @MD_NODE_005
  Scenario: A Node someone else already deleted does not hold the Machine
    Given a running Machine "m1" annotated "pre-terminate.delete.hook.machine.cluster.x-k8s.io/backup-files: my-backup-controller"
    And the Machine "m1" has been waiting for its pre-terminate hooks for 5 minutes
    And the Node of "m1" has been removed from the workload cluster
    When the hook owner "my-backup-controller" finishes its work and removes the annotation "pre-terminate.delete.hook.machine.cluster.x-k8s.io/backup-files"
    Then within 60 seconds the Machine "m1" is gone
    And no Warning event is recorded for the Machine "m1"
