@machine_controller
Feature: Pre-terminate hooks hold a Machine's deletion before its instance is terminated
  An annotation whose key starts with pre-terminate.delete.hook.machine.cluster.x-k8s.io is a
  pre-terminate hook. The machine controller drains the Node and waits for its volumes, then, while a
  pre-terminate hook is present, leaves the infrastructure machine (the cloud instance), the bootstrap
  config and the Node alone (seed 000 "Lifecycle Points", seed 001 "Machine deletion process" phase 7).

  Background:
    Given a Cluster "c1" whose control plane Machine "cp-0" is running

  @seed_000 @seed_001 @must @MD_PRETERM_001
  Scenario: A pre-terminate hook keeps the infrastructure machine from being deleted
    Given a running Machine "m1" annotated "pre-terminate.delete.hook.machine.cluster.x-k8s.io/backup-files: my-backup-controller"
    And the Machine "m1" has been deleted
    When 10 minutes pass
    Then the Machine "m1" is deleting with reason "WaitingForPreTerminateHook"
    And the FakeMachine "m1" exists and is not marked for deletion
    And the FakeBootstrapConfig "m1" exists and is not marked for deletion
    And the Node of "m1" exists

  @seed_000 @seed_001 @must @MD_PRETERM_002
  Scenario: Removing the last pre-terminate hook deletes the infrastructure machine at once
    Given a running Machine "m1" annotated "pre-terminate.delete.hook.machine.cluster.x-k8s.io/backup-files: my-backup-controller"
    And the Machine "m1" has been waiting for its pre-terminate hooks for 5 minutes
    When the hook owner "my-backup-controller" finishes its work and removes the annotation "pre-terminate.delete.hook.machine.cluster.x-k8s.io/backup-files"
    Then the FakeMachine "m1" was deleted

  @seed_000 @seed_001 @must @MD_PRETERM_003
  Scenario: A pre-terminate hook does not hold back the drain
    Given a running Machine "m1" annotated "pre-terminate.delete.hook.machine.cluster.x-k8s.io/backup-files: my-backup-controller"
    And the Node of "m1" runs a Pod "default/web-0"
    When the Machine "m1" is deleted
    Then the Node of "m1" is cordoned
    And the Pod "default/web-0" is evicted
    And within 60 seconds the Machine "m1" is deleting with reason "WaitingForPreTerminateHook"

  # seeds/000_fa8cc5aafa475b5c.txt "Determining when to take action" says a pre-terminate hook cannot yet run
  # "only after a node has been drained"; seed 001 and upstream order the phases so that it does: we follow
  # seed 001.
  @seed_000 @seed_001 @must @MD_PRETERM_004
  Scenario: The Machine waits for its pre-terminate hooks only once its Node is drained
    Given a running Machine "m1" annotated "pre-terminate.delete.hook.machine.cluster.x-k8s.io/backup-files: my-backup-controller"
    And the Node of "m1" runs the Pods:
      | pod           | grace |
      | default/web-0 | 30    |
      | default/web-1 | 60    |
    When the Machine "m1" is deleted
    Then within 120 seconds the Machine "m1" is deleting with reason "WaitingForPreTerminateHook"
    And the Machine "m1" started waiting for its pre-terminate hooks only after its Node was drained

  @seed_000 @seed_001 @must @MD_PRETERM_005
  Scenario: A pre-terminate hook added during the drain stops the deletion before the instance is terminated
    Given a running Machine "m1"
    And the Node of "m1" runs a Pod "default/web-0" with a termination grace period of 60 seconds
    And the Machine "m1" has been deleted
    When the Machine "m1" is annotated "pre-terminate.delete.hook.machine.cluster.x-k8s.io/backup-files: my-backup-controller"
    Then within 120 seconds the Machine "m1" is deleting with reason "WaitingForPreTerminateHook"
    And the FakeMachine "m1" exists and is not marked for deletion

  @seed_001 @must @MD_PRETERM_006
  Scenario: A Machine that never got a Node still waits for its pre-terminate hooks
    Given a Machine "m1" that never gets a Node, annotated "pre-terminate.delete.hook.machine.cluster.x-k8s.io/backup-files: my-backup-controller"
    And the Machine "m1" has been deleted
    When 10 minutes pass
    Then the Machine "m1" is deleting with reason "WaitingForPreTerminateHook"
    And the FakeMachine "m1" exists and is not marked for deletion
