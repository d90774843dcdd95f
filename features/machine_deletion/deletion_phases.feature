@machine_controller
Feature: The phases of a Machine's deletion, in order
  Seed 001 ("Machine deletion process") breaks a Machine's deletion into ten phases: deletion is
  triggered, pre-drain hooks, the drain decision and the drain, the volume decision and the volume
  wait, pre-terminate hooks, then the infrastructure machine, the bootstrap config and the Node are
  deleted, each waited for until gone. Phases 3 and 5 are decisions, not writes; drain_skip_rules and
  volume_detach state them. The audit trail of every write shows the order.

  Background:
    Given a Cluster "c1" whose control plane Machine "cp-0" is running

  @seed_001 @must @MD_PHASE_001
  Scenario: Deleting a Machine marks it for deletion and its finalizer keeps it
    Given a running Machine "m1" annotated "pre-terminate.delete.hook.machine.cluster.x-k8s.io/backup-files: my-backup-controller"
    When the Machine "m1" is deleted
    Then the Machine "m1" is marked for deletion
    And the Machine "m1" has the finalizer "machine.cluster.x-k8s.io"

  @seed_001 @must @MD_PHASE_002
  Scenario: The ten phases of a Machine's deletion happen in order
    Given a running Machine "m1" with:
      | setting    | value                                                                                             |
      | annotation | pre-drain.delete.hook.machine.cluster.x-k8s.io/migrate-important-app: my-app-migration-controller |
      | annotation | pre-terminate.delete.hook.machine.cluster.x-k8s.io/backup-files: my-backup-controller             |
    And the Node of "m1" runs a Pod "default/web-0"
    And the Node of "m1" runs a Pod "default/db-0" using the claim "db-data" of the CSI volume "pv-db"
    And the FakeMachine "m1" takes 2 minutes to delete
    And the FakeBootstrapConfig "m1" takes 2 minutes to delete
    When the Machine "m1" is deleted while its hook owners are at work
    Then the deletion of the Machine "m1" went through these steps, in order:
      | step | observation                         |
      | 1    | the Machine is marked for deletion  |
      | 2    | its pre-drain hooks are removed     |
      | 4    | its Node is cordoned                |
      | 4    | its Pods are evicted                |
      | 4    | its Pods are gone                   |
      | 6    | its volumes are detached            |
      | 7    | its pre-terminate hooks are removed |
      | 8    | its FakeMachine is deleted          |
      | 8    | its FakeMachine is gone             |
      | 9    | its FakeBootstrapConfig is deleted  |
      | 9    | its FakeBootstrapConfig is gone     |
      | 10   | its Node is deleted                 |
      | 10   | the Machine is gone                 |

  @seed_001 @must @MD_PHASE_003
  Scenario: The bootstrap config is deleted only once the infrastructure machine is gone
    Given a running Machine "m1"
    And the FakeMachine "m1" takes 5 minutes to delete
    And the Machine "m1" has been deleted
    When 4 minutes pass
    Then the FakeMachine "m1" is marked for deletion
    And the FakeBootstrapConfig "m1" exists and is not marked for deletion
    And the Machine "m1" is deleting with reason "WaitingForInfrastructureDeletion" and the message "Waiting for FakeMachine to be deleted"
    And within 120 seconds the FakeBootstrapConfig "m1" is gone
    And the FakeBootstrapConfig "m1" was deleted only after the FakeMachine "m1" was gone

  @seed_001 @must @MD_PHASE_004
  Scenario: The Node is deleted only once the bootstrap config is gone
    Given a running Machine "m1"
    And the FakeBootstrapConfig "m1" takes 5 minutes to delete
    And the Machine "m1" has been deleted
    When 4 minutes pass
    Then the FakeMachine "m1" is gone
    And the FakeBootstrapConfig "m1" is marked for deletion
    And the Node of "m1" exists
    And the Machine "m1" is deleting with reason "WaitingForBootstrapDeletion" and the message "Waiting for FakeBootstrapConfig to be deleted"
    And within 120 seconds the Machine "m1" is gone
    And the Node "m1" was deleted only after the FakeBootstrapConfig "m1" was gone

  @seed_001 @must @MD_PHASE_005
  Scenario: An infrastructure machine that never goes away keeps the Machine
    Given a running Machine "m1"
    And the FakeMachine "m1" never finishes deleting
    And the Machine "m1" has been deleted
    When 3 days pass
    Then the Machine "m1" is deleting with reason "WaitingForInfrastructureDeletion"
    And the FakeBootstrapConfig "m1" exists and is not marked for deletion
    And the Node of "m1" exists

  @seed_001 @should @MD_PHASE_006
  Scenario: The machine controller removes only its own finalizer
    Given a running Machine "m1"
    And the Machine "m1" has the finalizer "example.com/keep-for-audit"
    When the Machine "m1" is deleted
    Then within 60 seconds the FakeBootstrapConfig "m1" is gone
    And within 60 seconds the Machine "m1" no longer has the finalizer "machine.cluster.x-k8s.io"
    And the Machine "m1" has the finalizer "example.com/keep-for-audit"
    And the Node of "m1" is gone
