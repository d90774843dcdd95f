@machine_controller
Feature: What a Machine being deleted tells about its deletion
  A Machine being deleted reports its stage in the Deleting condition (status.v1beta2.conditions) and,
  for the hooks, the drain and the volume wait, in v1beta1 conditions of status.conditions: which
  hooks it waits for (seed 000 "Risks and Mitigations" asks troubleshooting to check the hook points)
  and which Pods hold the drain and why (seed 001 "Observability").

  Background:
    Given a Cluster "c1" whose control plane Machine "cp-0" is running

  @seed_001 @must @MD_OBS_001
  Scenario: The Deleting condition goes through the stages of the deletion in order
    Given a running Machine "m1" with:
      | setting    | value                                                                                             |
      | annotation | pre-drain.delete.hook.machine.cluster.x-k8s.io/migrate-important-app: my-app-migration-controller |
      | annotation | pre-terminate.delete.hook.machine.cluster.x-k8s.io/backup-files: my-backup-controller             |
    And the Node of "m1" runs a Pod "default/db-0" using the claim "db-data" of the CSI volume "pv-db"
    And the volume "pv-db" takes 60 seconds to detach
    And the FakeMachine "m1" takes 2 minutes to delete
    And the FakeBootstrapConfig "m1" takes 2 minutes to delete
    When the Machine "m1" is deleted while its hook owners are at work
    Then the Machine "m1" went through these deletion stages, in order:
      | reason                           |
      | WaitingForPreDrainHook           |
      | DrainingNode                     |
      | WaitingForVolumeDetach           |
      | WaitingForPreTerminateHook       |
      | WaitingForInfrastructureDeletion |
      | WaitingForBootstrapDeletion      |

  @seed_000 @must @MD_OBS_002
  Scenario: A Machine waiting for pre-drain hooks names them, sorted
    Given a running Machine "m1" with:
      | setting    | value                                                                             |
      | annotation | pre-drain.delete.hook.machine.cluster.x-k8s.io/wipe-disks: my-wipe-controller     |
      | annotation | pre-drain.delete.hook.machine.cluster.x-k8s.io/backup-files: my-backup-controller |
    When the Machine "m1" is deleted
    Then the Machine "m1" has the condition "PreDrainDeleteHookSucceeded" "False" with reason "WaitingExternalHook" and severity "Info"
    And the Machine "m1" is deleting with reason "WaitingForPreDrainHook" and the message "Waiting for pre-drain hooks to succeed (hooks: pre-drain.delete.hook.machine.cluster.x-k8s.io/backup-files,pre-drain.delete.hook.machine.cluster.x-k8s.io/wipe-disks)"

  @seed_000 @must @MD_OBS_003
  Scenario: A Machine waiting for pre-terminate hooks names them, sorted
    Given a running Machine "m1" with:
      | setting    | value                                                                                 |
      | annotation | pre-terminate.delete.hook.machine.cluster.x-k8s.io/wipe-disks: my-wipe-controller     |
      | annotation | pre-terminate.delete.hook.machine.cluster.x-k8s.io/backup-files: my-backup-controller |
    When the Machine "m1" is deleted
    Then within 60 seconds the Machine "m1" is deleting with reason "WaitingForPreTerminateHook"
    And the Machine "m1" has the condition "PreTerminateDeleteHookSucceeded" "False" with reason "WaitingExternalHook" and severity "Info"
    And the Machine "m1" is deleting with reason "WaitingForPreTerminateHook" and the message "Waiting for pre-terminate hooks to succeed (hooks: pre-terminate.delete.hook.machine.cluster.x-k8s.io/backup-files,pre-terminate.delete.hook.machine.cluster.x-k8s.io/wipe-disks)"

  @seed_001 @must @MD_OBS_004
  Scenario: The drain's conditions list each kind of Pod that holds it
    Given a running Machine "m1"
    And the MachineDrainRules:
      | rule       | behavior      | order | pods      |
      | drain-late | Drain         | 10    | app=late  |
      | wait-batch | WaitCompleted |       | app=batch |
    And the Node of "m1" runs the Pods:
      | pod             | labels    | grace |
      | default/slow-0  | app=slow  | 300   |
      | default/web-0   | app=web   | 30    |
      | default/batch-0 | app=batch | 30    |
      | default/late-0  | app=late  | 30    |
    And the workload cluster has a PodDisruptionBudget "default/web-pdb" with minAvailable 1 selecting "app=web"
    When the Machine "m1" is deleted
    Then the Machine "m1" has the condition "DrainingSucceeded" "False" with reason "Draining" and the message:
      """
      Drain not completed yet (started at <drain start>):
      * Pod default/slow-0: deletionTimestamp set, but still not removed from the Node
      * Pod default/web-0: cannot evict pod as it would violate the pod's disruption budget. The disruption budget web-pdb needs 1 healthy pods and has 1 currently
      * Pod default/batch-0: waiting for completion
      After above Pods have been removed from the Node, the following Pods will be evicted: default/late-0
      """
    And the Machine "m1" has the condition "DrainingSucceeded" "False" with reason "Draining" and severity "Info"

  # seeds/001_6948c2535bf9c9aa.txt "Observability" shows the condition in a pre-release format ("Drain not
  # completed yet:", "* Pods with deletionTimestamp that still exist: ...", "* Pods with eviction failed:").
  # We follow the released format (DESIGN.md "machine deletion"); this is the seed's example situation.
  @seed_001 @must @MD_OBS_005
  Scenario: The seed's example drain condition, in the released format
    Given a running Machine "m1"
    And the Node of "m1" runs a Pod "cert-manager/cert-manager-756d54fb98-hcb6k" with a termination grace period of 600 seconds
    And the Node of "m1" runs 10 Pods "test-namespace/nginx-deployment-<n>" labelled "app=nginx"
    And the workload cluster has a PodDisruptionBudget "test-namespace/nginx" with minAvailable 10 selecting "app=nginx"
    When the Machine "m1" is deleted
    Then the Machine "m1" has the condition "DrainingSucceeded" "False" with reason "Draining" and the message:
      """
      Drain not completed yet (started at <drain start>):
      * Pod cert-manager/cert-manager-756d54fb98-hcb6k: deletionTimestamp set, but still not removed from the Node
      * Pods test-namespace/nginx-deployment-0, test-namespace/nginx-deployment-1, test-namespace/nginx-deployment-2, ... (7 more): cannot evict pod as it would violate the pod's disruption budget. The disruption budget nginx needs 10 healthy pods and has 10 currently
      """

  @seed_001 @should @MD_OBS_006
  Scenario: The drain message shows five eviction failures and counts the Pods of the others
    Given a running Machine "m1"
    And the Node of "m1" runs 7 Pods "default/app-<n>" each under its own PodDisruptionBudget "pdb-<n>" with minAvailable 1
    When the Machine "m1" is deleted
    Then the Machine "m1" is deleting with reason "DrainingNode" and the message:
      """
      Drain not completed yet (started at <drain start>):
      * Pod default/app-0: cannot evict pod as it would violate the pod's disruption budget. The disruption budget pdb-0 needs 1 healthy pods and has 1 currently
      * Pod default/app-1: cannot evict pod as it would violate the pod's disruption budget. The disruption budget pdb-1 needs 1 healthy pods and has 1 currently
      * Pod default/app-2: cannot evict pod as it would violate the pod's disruption budget. The disruption budget pdb-2 needs 1 healthy pods and has 1 currently
      * Pod default/app-3: cannot evict pod as it would violate the pod's disruption budget. The disruption budget pdb-3 needs 1 healthy pods and has 1 currently
      * Pod default/app-4: cannot evict pod as it would violate the pod's disruption budget. The disruption budget pdb-4 needs 1 healthy pods and has 1 currently
      * 2 Pods with other issues
      """

  @seed_001 @should @MD_OBS_007
  Scenario: A Machine that is not being deleted says so
    Given a running Machine "m1"
    Then the Machine "m1" is not deleting
