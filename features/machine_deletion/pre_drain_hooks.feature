@machine_controller
Feature: Pre-drain hooks hold a Machine's deletion before its Node is drained
  An annotation whose key starts with pre-drain.delete.hook.machine.cluster.x-k8s.io is a pre-drain
  hook. While a Machine being deleted carries one, the machine controller does nothing else for it:
  the Node is not cordoned, no Pod is evicted, nothing is deleted (seed 000 "Lifecycle Points",
  seed 001 "Machine deletion process" phase 2). Removing the last one lets the deletion go on at once.

  Background:
    Given a Cluster "c1" whose control plane Machine "cp-0" is running

  @seed_000 @seed_001 @must @MD_PREDRAIN_001
  Scenario: A pre-drain hook keeps the Node from being cordoned and drained
    Given a running Machine "m1" annotated "pre-drain.delete.hook.machine.cluster.x-k8s.io/migrate-important-app: my-app-migration-controller"
    And the Node of "m1" runs a Pod "default/web-0"
    And the Machine "m1" has been deleted
    When 10 minutes pass
    Then the Machine "m1" is deleting with reason "WaitingForPreDrainHook"
    And the Node of "m1" was never cordoned
    And the Pod "default/web-0" is not evicted

  # Seed 000: a HIC acts once a Machine "has a DeletionTimestamp or enters the \"Deleting\" phase".
  @seed_000 @must @MD_PHASE_007
  Scenario: A Machine held by a pre-drain hook reports the phase Deleting
    Given a running Machine "m1" annotated "pre-drain.delete.hook.machine.cluster.x-k8s.io/migrate-important-app: my-app-migration-controller"
    And the Machine "m1" has been deleted
    When 60 seconds pass
    Then the Machine "m1" is deleting with reason "WaitingForPreDrainHook"
    And the Machine "m1" is in phase "Deleting"

  @seed_000 @seed_001 @must @MD_PREDRAIN_002
  Scenario: Removing the last pre-drain hook starts the drain at once
    Given a running Machine "m1" annotated "pre-drain.delete.hook.machine.cluster.x-k8s.io/migrate-important-app: my-app-migration-controller"
    And the Node of "m1" runs a Pod "default/web-0"
    And the Machine "m1" has been waiting for its pre-drain hooks for 5 minutes
    When the hook owner "my-app-migration-controller" finishes its work and removes the annotation "pre-drain.delete.hook.machine.cluster.x-k8s.io/migrate-important-app"
    Then the Node of "m1" is cordoned
    And the Pod "default/web-0" is evicted

  @seed_001 @must @MD_PREDRAIN_003
  Scenario: Nothing of the Machine is deleted while a pre-drain hook is present
    Given a running Machine "m1" annotated "pre-drain.delete.hook.machine.cluster.x-k8s.io/migrate-important-app: my-app-migration-controller"
    And the Machine "m1" has been deleted
    When 10 minutes pass
    Then the FakeMachine "m1" exists and is not marked for deletion
    And the FakeBootstrapConfig "m1" exists and is not marked for deletion
    And the Node of "m1" exists
