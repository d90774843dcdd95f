@cluster_controller
Feature: A Cluster with a managed topology waits for its BeforeClusterDelete hook before it is taken apart
  Cluster API's Cluster controller deletes nothing of a Cluster with spec.topology until the topology
  controller has annotated it runtime.cluster.x-k8s.io/ok-to-delete, which it does once the
  BeforeClusterDelete hook let the deletion go on (reference/runtime-hooks-and-addons.md §2.4). A Cluster
  without a topology has no such hook and skips the gate.

  # Who sets the annotation, and when, is the topology controller's and the Runtime Extensions' part
  # (features/runtime_hooks); here the audit trail shows that nothing was deleted before it was set.
  @must @CL_GATE_001
  Scenario: Nothing of a Cluster with a managed topology is deleted before it is annotated ok-to-delete
    Given a Cluster "c2" with a managed topology
    And a running Machine "m2"
    When the Cluster "c2" is deleted
    Then within 300 seconds the Cluster "c2" is gone
    And the Machine "m2" was deleted only after the Cluster "c2" was annotated "runtime.cluster.x-k8s.io/ok-to-delete"

  @must @CL_GATE_002
  Scenario: A Cluster without a managed topology is taken apart without the ok-to-delete annotation
    Given a Cluster "c1" whose control plane Machine "cp-0" is running
    And a running Machine "m1"
    When the Cluster "c1" is deleted
    Then within 300 seconds the Cluster "c1" is gone
    And the Machine "m1" was deleted
    And the Cluster "c1" never carried the annotation "runtime.cluster.x-k8s.io/ok-to-delete"
    And the Cluster "c1" never reported the deletion stage "WaitingForBeforeDeleteHook"
