Feature: Rules every lifecycle hook follows
  A lifecycle point may carry any number of hooks, in any order, with any value; the machine
  controller waits until all of them are gone and never gives up on one (seed 000 "Proposal",
  "Annotation Form", "Changes to machine-controller"). Hook implementing controllers, or an
  administrator, remove them (seed 000 "Hook Implementing Controller Design"); what a hook implementing
  controller itself must do is judged on a real one in features/hic/.

  Background:
    Given a Cluster "c1" whose control plane Machine "cp-0" is running

  Rule: The machine controller waits for every hook of a lifecycle point, and only for hooks

    @machine_controller @seed_000 @must @MD_HOOK_001
    Scenario Outline: Removing one of several <point> hooks keeps the Machine waiting
      Given a running Machine "m1" with:
        | setting    | value                                                                           |
        | annotation | <point>.delete.hook.machine.cluster.x-k8s.io/backup-files: my-backup-controller |
        | annotation | <point>.delete.hook.machine.cluster.x-k8s.io/wipe-disks: my-wipe-controller     |
      And the Machine "m1" has been waiting for its <point> hooks for 5 minutes
      When the hook owner "my-backup-controller" finishes its work and removes the annotation "<point>.delete.hook.machine.cluster.x-k8s.io/backup-files"
      Then the Machine "m1" is deleting with reason "<waiting>" and the message "Waiting for <point> hooks to succeed (hooks: <point>.delete.hook.machine.cluster.x-k8s.io/wipe-disks)"
      And the Machine "m1" has the condition "<condition>" "False" with reason "WaitingExternalHook"

      Examples:
        | case          | point         | waiting                    | condition                       |
        | pre-drain     | pre-drain     | WaitingForPreDrainHook     | PreDrainDeleteHookSucceeded     |
        | pre-terminate | pre-terminate | WaitingForPreTerminateHook | PreTerminateDeleteHookSucceeded |

    @machine_controller @seed_000 @must @MD_HOOK_002
    Scenario Outline: The <point> hooks may be removed in any order (<order>)
      Given a running Machine "m1" with:
        | setting    | value                                                                           |
        | annotation | <point>.delete.hook.machine.cluster.x-k8s.io/backup-files: my-backup-controller |
        | annotation | <point>.delete.hook.machine.cluster.x-k8s.io/wipe-disks: my-wipe-controller     |
      And the Machine "m1" has been waiting for its <point> hooks for 5 minutes
      When the hook owners remove the annotations "<point>.delete.hook.machine.cluster.x-k8s.io/<first>" and then "<point>.delete.hook.machine.cluster.x-k8s.io/<second>"
      Then the Machine "m1" has the condition "<condition>" "True"
      And within 60 seconds the Machine "m1" is gone

      Examples:
        | case                  | point         | order             | first        | second       | condition                       |
        | pre-drain-forward     | pre-drain     | backup, then wipe | backup-files | wipe-disks   | PreDrainDeleteHookSucceeded     |
        | pre-drain-reverse     | pre-drain     | wipe, then backup | wipe-disks   | backup-files | PreDrainDeleteHookSucceeded     |
        | pre-terminate-forward | pre-terminate | backup, then wipe | backup-files | wipe-disks   | PreTerminateDeleteHookSucceeded |
        | pre-terminate-reverse | pre-terminate | wipe, then backup | wipe-disks   | backup-files | PreTerminateDeleteHookSucceeded |

    @machine_controller @seed_000 @must @MD_HOOK_003
    Scenario Outline: A hook whose value is <what> is still a hook
      Given a running Machine "m1" annotated "<annotation>"
      And the Machine "m1" has been deleted
      When 10 minutes pass
      Then the Machine "m1" is deleting with reason "<waiting>"

      Examples:
        | case                | what     | annotation                                                           | waiting                    |
        | pre-drain-owner     | an owner | pre-drain.delete.hook.machine.cluster.x-k8s.io/backup: my-controller | WaitingForPreDrainHook     |
        | pre-drain-empty     | empty    | pre-drain.delete.hook.machine.cluster.x-k8s.io/backup:               | WaitingForPreDrainHook     |
        | pre-drain-false     | "false"  | pre-drain.delete.hook.machine.cluster.x-k8s.io/backup: false         | WaitingForPreDrainHook     |
        | pre-terminate-empty | empty    | pre-terminate.delete.hook.machine.cluster.x-k8s.io/backup:           | WaitingForPreTerminateHook |
        | pre-terminate-done  | "done"   | pre-terminate.delete.hook.machine.cluster.x-k8s.io/backup: done      | WaitingForPreTerminateHook |

    @machine_controller @seed_000 @must @MD_HOOK_004 @MD_HOOK_012
    Scenario Outline: A <point> hook never times out and the machine controller never removes it
      Given a running Machine "m1" with:
        | setting          | value                                                                           |
        | annotation       | <point>.delete.hook.machine.cluster.x-k8s.io/backup-files: my-backup-controller |
        | nodeDrainTimeout | 1m                                                                              |
      And the Machine "m1" has been deleted
      When 3 days pass
      Then the Machine "m1" is deleting with reason "<waiting>"
      And the Machine "m1" still has the annotation "<point>.delete.hook.machine.cluster.x-k8s.io/backup-files"
      And the FakeMachine "m1" exists and is not marked for deletion
      And no Warning event is recorded for the Machine "m1"

      Examples:
        | case          | point         | waiting                    |
        | pre-drain     | pre-drain     | WaitingForPreDrainHook     |
        | pre-terminate | pre-terminate | WaitingForPreTerminateHook |

    @machine_controller @seed_000 @seed_001 @must @MD_HOOK_005
    Scenario: Days spent waiting for a pre-drain hook do not count against nodeDrainTimeout
      Given a running Machine "m1" with:
        | setting          | value                                                                                             |
        | annotation       | pre-drain.delete.hook.machine.cluster.x-k8s.io/migrate-important-app: my-app-migration-controller |
        | nodeDrainTimeout | 1m                                                                                                |
      And the Node of "m1" runs a Pod "default/web-0"
      And the Machine "m1" has been deleted
      And 3 days have passed
      When the hook owner "my-app-migration-controller" finishes its work and removes the annotation "pre-drain.delete.hook.machine.cluster.x-k8s.io/migrate-important-app"
      Then the Node of "m1" is cordoned
      And the Pod "default/web-0" is evicted

    @machine_controller @seed_000 @must @MD_HOOK_006
    Scenario Outline: A <point> hook present when the Machine is created holds its deletion
      Given a running Machine "m1" annotated "<point>.delete.hook.machine.cluster.x-k8s.io/backup-files: my-backup-controller"
      When the Machine "m1" is deleted
      Then within 60 seconds the Machine "m1" is deleting with reason "<waiting>"
      And the Machine "m1" has the condition "<condition>" "False" with reason "WaitingExternalHook"

      Examples:
        | case          | point         | waiting                    | condition                       |
        | pre-drain     | pre-drain     | WaitingForPreDrainHook     | PreDrainDeleteHookSucceeded     |
        | pre-terminate | pre-terminate | WaitingForPreTerminateHook | PreTerminateDeleteHookSucceeded |

    @machine_controller @seed_000 @must @MD_HOOK_007
    Scenario Outline: A <point> hook a user adds to an existing Machine holds its deletion
      Given a running Machine "m1"
      And the Machine "m1" has been annotated "<point>.delete.hook.machine.cluster.x-k8s.io/backup-files: jane@example.com"
      When the Machine "m1" is deleted
      Then within 60 seconds the Machine "m1" is deleting with reason "<waiting>"

      Examples:
        | case          | point         | waiting                    |
        | pre-drain     | pre-drain     | WaitingForPreDrainHook     |
        | pre-terminate | pre-terminate | WaitingForPreTerminateHook |

    @machine_controller @seed_000 @must @MD_HOOK_008
    Scenario Outline: An administrator removing a <point> hook with kubectl resumes the deletion
      Given a running Machine "m1" annotated "<point>.delete.hook.machine.cluster.x-k8s.io/backup-files: my-broken-controller"
      And the Machine "m1" has been deleted
      When an administrator removes the annotation "<point>.delete.hook.machine.cluster.x-k8s.io/backup-files" from the Machine "m1" with kubectl
      Then within 60 seconds the Machine "m1" is gone

      Examples:
        | case          | point         |
        | pre-drain     | pre-drain     |
        | pre-terminate | pre-terminate |

    @machine_controller @seed_000 @should @MD_HOOK_009
    Scenario Outline: While it waits for a <point> hook the Machine is left alone
      Given a running Machine "m1" annotated "<point>.delete.hook.machine.cluster.x-k8s.io/backup-files: my-backup-controller"
      And the Machine "m1" has been waiting for its <point> hooks for 5 minutes
      When 10 minutes pass
      Then nothing was written to the Machine "m1"

      Examples:
        | case          | point         |
        | pre-drain     | pre-drain     |
        | pre-terminate | pre-terminate |

    # seeds/000_fa8cc5aafa475b5c.txt "Annotation Form" spells the key
    # <lifecycle-point>.delete.hook.machine.cluster-api.x-k8s.io/<hook-name>. We follow seed 001 and upstream
    # (DESIGN.md "hook annotations"): that spelling is not a hook.
    @machine_controller @seed_000 @must @MD_HOOK_010
    Scenario Outline: An annotation spelled as seed 000's annotation form (<point>) is not a hook
      Given a running Machine "m1" annotated "<point>.delete.hook.machine.cluster-api.x-k8s.io/backup-files: my-backup-controller"
      When the Machine "m1" is deleted
      Then within 60 seconds the Machine "m1" is gone
      And the Machine "m1" never reported the deletion stage "<waiting>"

      Examples:
        | case          | point         | waiting                    |
        | pre-drain     | pre-drain     | WaitingForPreDrainHook     |
        | pre-terminate | pre-terminate | WaitingForPreTerminateHook |

    # seeds/000_fa8cc5aafa475b5c.txt "Annotation Examples" drop ".delete" and use cluster-api.x-k8s.io. We
    # follow seed 001 and upstream (DESIGN.md "hook annotations"): these examples are not hooks.
    @machine_controller @seed_000 @must @MD_HOOK_011
    Scenario Outline: Seed 000's example annotation <annotation> is not a hook
      Given a running Machine "m1" annotated "<annotation>"
      When the Machine "m1" is deleted
      Then within 60 seconds the Machine "m1" is gone
      And the Machine "m1" never reported the deletion stage "<waiting>"

      Examples:
        | case                    | annotation                                                                                                   | waiting                    |
        | migrate-important-app   | pre-drain.hook.machine.cluster-api.x-k8s.io/migrate-important-app: my-app-migration-controller               | WaitingForPreDrainHook     |
        | backup-files            | pre-terminate.hook.machine.cluster-api.x-k8s.io/backup-files: my-backup-controller                           | WaitingForPreTerminateHook |
        | wait-for-storage-detach | pre-terminate.hook.machine.cluster-api.x-k8s.io/wait-for-storage-detach: my-custom-storage-detach-controller | WaitingForPreTerminateHook |

    @machine_controller @seed_000 @seed_001 @must @MD_HOOK_013
    Scenario: A Machine without hooks never waits at a lifecycle point
      Given a running Machine "m1"
      When the Machine "m1" is deleted
      Then within 60 seconds the Machine "m1" is gone
      And the Machine "m1" never reported the deletion stage "WaitingForPreDrainHook"
      And the Machine "m1" never reported the deletion stage "WaitingForPreTerminateHook"

  # The hook implementing controller's side of seed 000 (MD_HIC_001..004, 006, 007) is judged on a real HIC, the
  # reference one or the one under test (--target hic), in features/hic/. The two rules below are about the
  # machine controller: the scenario plays the hook owners, and only the machine controller's writes are
  # judged (the FakeMachine's deletion, the cordon, the Machine going away).
  Rule: The machine controller follows the hook owners, however they order themselves or give up

    @machine_controller @seed_000 @may @MD_HIC_005
    Scenario: Hook owners that order themselves by a mark hold the deletion until the last hook is gone
      Given a running Machine "m1" with:
        | setting    | value                                                                                 |
        | annotation | pre-terminate.delete.hook.machine.cluster.x-k8s.io/backup-files: my-backup-controller |
        | annotation | pre-terminate.delete.hook.machine.cluster.x-k8s.io/wipe-disks: my-wipe-controller     |
      And the Machine "m1" has been waiting for its pre-terminate hooks for 5 minutes
      And the hook owner "my-backup-controller" has annotated the Machine "m1" with "example.com/backup-done: true"
      And the hook owner "my-backup-controller" has finished its work and removed the annotation "pre-terminate.delete.hook.machine.cluster.x-k8s.io/backup-files"
      When the hook owner "my-wipe-controller" sees "example.com/backup-done" on the Machine "m1" and removes the annotation "pre-terminate.delete.hook.machine.cluster.x-k8s.io/wipe-disks"
      Then within 60 seconds the Machine "m1" is gone
      And the FakeMachine "m1" was marked for deletion only after the annotation "pre-terminate.delete.hook.machine.cluster.x-k8s.io/wipe-disks" was removed from the Machine "m1"

    @machine_controller @seed_000 @may @MD_HIC_008
    Scenario: A hook its owner gives up on after an hour, and removes, lets the deletion move on
      Given a running Machine "m1" annotated "pre-drain.delete.hook.machine.cluster.x-k8s.io/migrate-important-app: my-impatient-controller"
      And the Machine "m1" has been deleted
      When the hook owner "my-impatient-controller" gives up after 60 minutes and removes the annotation "pre-drain.delete.hook.machine.cluster.x-k8s.io/migrate-important-app"
      Then the Node of "m1" is cordoned
      And within 60 seconds the Machine "m1" is gone
