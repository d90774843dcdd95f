@machine_controller
Feature: A drain blocked by a PodDisruptionBudget
  An eviction that would violate a PodDisruptionBudget is refused (seed 001 "Node drain"). The Pod
  keeps running, the Machine keeps draining and says which budget blocks it (seed 001
  "Observability"); every 20 seconds the drain tries again, so it resumes as soon as the budget
  allows a disruption.

  Background:
    Given a Cluster "c1" whose control plane Machine "cp-0" is running
    And a running Machine "m1"

  @seed_001 @must @MD_PDB_001
  Scenario: A Pod its budget protects is not evicted and the Machine keeps draining
    Given the Node of "m1" runs the Pods:
      | pod           | labels  |
      | default/web-0 | app=web |
      | default/web-1 | app=web |
    And the workload cluster has a PodDisruptionBudget "default/web-pdb" with minAvailable 2 selecting "app=web"
    And the Machine "m1" has been deleted
    When 10 minutes pass
    Then the Pod "default/web-0" is not evicted
    And the Pod "default/web-1" is not evicted
    And the Pod "default/web-0" is still running
    And the Machine "m1" is deleting with reason "DrainingNode"
    And the FakeMachine "m1" exists and is not marked for deletion

  @seed_001 @must @MD_PDB_002
  Scenario: The Machine's conditions say which budget blocks the drain
    Given the Node of "m1" runs the Pods:
      | pod           | labels  |
      | default/web-0 | app=web |
      | default/web-1 | app=web |
    And the workload cluster has a PodDisruptionBudget "default/web-pdb" with minAvailable 2 selecting "app=web"
    When the Machine "m1" is deleted
    Then the Machine "m1" has the condition "DrainingSucceeded" "False" with reason "Draining" and severity "Info"
    And the Machine "m1" has the condition "DrainingSucceeded" "False" with reason "Draining" and the message:
      """
      Drain not completed yet (started at <drain start>):
      * Pods default/web-0, default/web-1: cannot evict pod as it would violate the pod's disruption budget. The disruption budget web-pdb needs 2 healthy pods and has 2 currently
      """
    And the Machine "m1" is deleting with reason "DrainingNode" and the message:
      """
      Drain not completed yet (started at <drain start>):
      * Pods default/web-0, default/web-1: cannot evict pod as it would violate the pod's disruption budget. The disruption budget web-pdb needs 2 healthy pods and has 2 currently
      """

  @seed_001 @must @MD_PDB_003 @MD_DRAIN_015
  Scenario: The drain resumes at its next pass once the budget allows disruptions
    Given the Node of "m1" runs the Pods:
      | pod           | labels  |
      | default/web-0 | app=web |
      | default/web-1 | app=web |
    And the workload cluster has a PodDisruptionBudget "default/web-pdb" with minAvailable 2 selecting "app=web"
    And the Machine "m1" has been deleted
    When the Node of "cp-0" starts the Pods:
      | pod           | labels  |
      | default/web-2 | app=web |
      | default/web-3 | app=web |
    Then within 20 seconds the Pod "default/web-0" is evicted
    And the Pod "default/web-1" is evicted
    And within 60 seconds the Node of "m1" is drained

  # "These steps are repeated every 20s": the budget frees at once, yet the refused eviction comes back only
  # at the drain's next pass (a drain retrying every 2 s would evict within seconds).
  @seed_001 @must @MD_DRAIN_015
  Scenario: A refused drain is tried again at its next pass 20 seconds later, not sooner
    Given the Node of "m1" runs the Pods:
      | pod           | labels  |
      | default/web-0 | app=web |
      | default/web-1 | app=web |
    And the workload cluster has a PodDisruptionBudget "default/web-pdb" with minAvailable 2 selecting "app=web"
    And the Machine "m1" has been deleted
    When the Node of "cp-0" starts the Pods:
      | pod           | labels  |
      | default/web-2 | app=web |
      | default/web-3 | app=web |
    Then within 20 seconds the Pod "default/web-0" is evicted
    And the Pod "default/web-0" was evicted no sooner than 20 seconds after the drain of "m1" started
