@machine_controller
Feature: Draining a Node that is unreachable
  When a Node's Ready condition is Unknown its kubelet no longer acts: evicted Pods never terminate.
  The drain then evicts with a grace period of 1 second and ignores Pods whose deletionTimestamp is
  more than 1 second in the past; PodDisruptionBudgets are still respected, since the eviction API
  enforces them (seed 001 "Node drain", Special cases).

  Background:
    Given a Cluster "c1" whose control plane Machine "cp-0" is running
    And a running Machine "m1"

  @seed_001 @must @MD_UNREACH_001
  Scenario: Pods on an unreachable Node are evicted with a grace period of 1 second
    Given the Node of "m1" runs a Pod "default/web-0" with a termination grace period of 300 seconds
    And the Node of "m1" has become unreachable
    When the Machine "m1" is deleted
    Then the Pod "default/web-0" was evicted with a grace period of 1 second

  @seed_001 @must @MD_UNREACH_002
  Scenario: The drain of an unreachable Node completes although its evicted Pods stay
    Given the Node of "m1" runs a Pod "default/web-0" with a termination grace period of 300 seconds
    And the Node of "m1" has become unreachable
    When the Machine "m1" is deleted
    Then within 30 seconds the Node of "m1" is drained
    And the Pod "default/web-0" still exists in the workload cluster

  @seed_001 @must @MD_UNREACH_002
  Scenario: A Pod that has been terminating on an unreachable Node for a while is ignored
    Given the Node of "m1" runs a Pod "default/stuck-0" with a termination grace period of 10 seconds
    And the Node of "m1" has become unreachable
    And the Pod "default/stuck-0" of the workload cluster was deleted 60 seconds ago
    When the Machine "m1" is deleted
    Then the Node of "m1" is drained
    And the Pod "default/stuck-0" is not evicted
    And the Pod "default/stuck-0" still exists in the workload cluster

  @seed_001 @must @MD_UNREACH_003
  Scenario: A PodDisruptionBudget still protects the Pods of an unreachable Node
    Given the Node of "m1" runs the Pods:
      | pod           | labels  |
      | default/web-0 | app=web |
      | default/web-1 | app=web |
    And the workload cluster has a PodDisruptionBudget "default/web-pdb" with minAvailable 2 selecting "app=web"
    And the Node of "m1" has become unreachable
    When the Machine "m1" is deleted
    Then the Pod "default/web-0" is not evicted
    And the Pod "default/web-1" is not evicted
    And the Machine "m1" is deleting with reason "DrainingNode" and the message:
      """
      Drain not completed yet (started at <drain start>):
      * Pods default/web-0, default/web-1: cannot evict pod as it would violate the pod's disruption budget. The disruption budget web-pdb needs 2 healthy pods and has 0 currently
      """

  @seed_001 @should @MD_UNREACH_004
  Scenario: The volumes of an unreachable Node are not waited for
    Given the Node of "m1" runs a Pod "default/db-0" using the claim "db-data" of the CSI volume "pv-db"
    And the Node of "m1" has become unreachable
    When the Machine "m1" is deleted
    Then within 60 seconds the FakeMachine "m1" is gone
    And the FakeMachine "m1" was deleted while the volume "pv-db" was still attached to the Node of "m1"
