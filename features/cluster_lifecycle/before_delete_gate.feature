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

  # With no extension holding it, the topology controller marks the Cluster ok-to-delete at the instant it is
  # deleted, so a Cluster controller without the gate may go unnoticed above; a blocking hook settles it.
  @must @CL_GATE_001
  Scenario: A Cluster with a managed topology whose BeforeClusterDelete hook blocks keeps everything in it
    Given a Runtime Extension "ext" registered with the failure policy Fail
    And a running Cluster "c2" with a managed topology at version "v1.31.0"
    And the extension "ext" answers BeforeClusterDelete with retryAfterSeconds 60
    When the Cluster "c2" is deleted while its extensions answer
    Then the Cluster "c2" is deleting with reason "WaitingForBeforeDeleteHook" and the message "Waiting for BeforeClusterDelete hook"
    And the KubeadmControlPlane "c2" exists and is not marked for deletion

  @must @CL_GATE_002
  Scenario: A Cluster without a managed topology is taken apart without the ok-to-delete annotation
    Given a Cluster "c1" whose control plane Machine "cp-0" is running
    And a running Machine "m1"
    When the Cluster "c1" is deleted
    Then within 300 seconds the Cluster "c1" is gone
    And the Machine "m1" was deleted
    And the Cluster "c1" never carried the annotation "runtime.cluster.x-k8s.io/ok-to-delete"
    And the Cluster "c1" never reported the deletion stage "WaitingForBeforeDeleteHook"
