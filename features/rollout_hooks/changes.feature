@rollout_deployment @seed_004
Feature: Changes while hooks run
  Rollover cancels running hooks and does not run new ones for the old revision (seed 004 "Algorithm");
  DESIGN.md settles the rest: hooks added for passed points do not run retroactively, hook time does not
  count against progressDeadlineSeconds, each hook runs at most once per revision across controller
  restarts, and a hook the rollout cannot run leaves a condition that says why.

  Background:
    Given a Node "n1" that is Ready
    And a Deployment "web" with 4 replicas, maxSurge "1" and maxUnavailable "0" that has rolled out

  @must @RH_ROLLOVER_001
  Scenario: A new template while a hook runs cancels it, and the new revision runs its own hooks
    Given the Deployment "web" has the lifecycle hooks:
      | hook | point | duration |
      | mid  | 50%   | 5m       |
    And the Deployment "web" has been updated to the image "registry.k8s.io/pause:3.11" and the hook Job "web-2-mid" is running
    When the Deployment "web" is updated to the image "registry.k8s.io/pause:3.12"
    Then the hook Job "web-2-mid" is suspended
    And within 1200 seconds the Deployment "web" has rolled out
    And the hooks of the Deployment "web" ran in this order:
      | hook |
      | mid  |
    And the hook Job "web-3-mid" belongs to the ReplicaSet of revision 3 and is labelled with it

  @must @RH_LATE_001
  Scenario: A hook added after its point was passed does not run for that revision
    Given the Deployment "web" has the lifecycle hooks:
      | hook | point | duration |
      | mid  | 50%   | 1m       |
    And the Deployment "web" has been updated to the image "registry.k8s.io/pause:3.11" and the hook Job "web-2-mid" is running
    When the lifecycle hooks of the Deployment "web" become:
      | hook  | point | duration |
      | mid   | 50%   | 1m       |
      | early | 25%   |          |
      | late  | 75%   |          |
    Then within 600 seconds the Deployment "web" has rolled out
    And the hooks of the Deployment "web" ran in this order:
      | hook | new available |
      | late | 3             |
    And the Job "web-2-early" is gone

  @must @RH_DEADLINE_001
  Scenario: Time spent in a hook does not count against progressDeadlineSeconds
    Given the Deployment "web" has a progress deadline of 30 seconds
    And the Deployment "web" has the lifecycle hooks:
      | hook | point | duration |
      | mid  | 50%   | 5m       |
    And the Deployment "web" has been updated to the image "registry.k8s.io/pause:3.11" and the hook Job "web-2-mid" is running
    When 240 seconds pass
    Then the Deployment "web" has the condition "Progressing" "True" with reason "ReplicaSetUpdated"
    And within 600 seconds the Deployment "web" has rolled out
    And the Deployment "web" has the condition "Progressing" "True" with reason "NewReplicaSetAvailable"

  # A real restart: the controller instances stop as a crash would (in-process and over HTTP they are
  # replaced; as a process, the process is killed) and new ones start from a fresh list+watch.
  @must @RH_RESTART_001
  Scenario: A controller restart while a hook runs neither runs it again nor scales
    Given the Deployment "web" has the lifecycle hooks:
      | hook | point | duration |
      | mid  | 50%   | 2m       |
    And the Deployment "web" has been updated to the image "registry.k8s.io/pause:3.11" and the hook Job "web-2-mid" is running
    When the rollout controllers restart
    Then no hook of the Deployment "web" ran since
    And nothing scaled the ReplicaSets of the Deployment "web"
    And within 600 seconds the Deployment "web" has rolled out
    And the rollout invariants held at every recorded state of the Deployment "web"
    And the hook Job "web-2-mid" was created 1 time

  # The controllers cannot write while the hook Job finishes (every write of theirs answers 500), so the
  # hook is still recorded as running and nothing has moved when they restart: the new instances find the
  # finished Job, record it and go on, without a second Job.
  @must @RH_RESTART_002
  Scenario: A controller restart after a hook Job finished but before the rollout moved on goes on without running it again
    Given the Deployment "web" has the lifecycle hooks:
      | hook | point | duration |
      | mid  | 50%   | 1m       |
    And the Deployment "web" has been updated to the image "registry.k8s.io/pause:3.11" and the hook Job "web-2-mid" is running
    And the writes of the rollout controllers fail
    And the hook Job "web-2-mid" has completed and the Deployment "web" has not moved on
    When the writes of the rollout controllers succeed again and the rollout controllers restart
    Then no hook of the Deployment "web" ran since
    And within 600 seconds the Deployment "web" has rolled out
    And the rollout invariants held at every recorded state of the Deployment "web"
    And the hook Job "web-2-mid" was created 1 time
    And the hooks of the Deployment "web" ran in this order:
      | hook |

  @must @RH_BAD_001
  Scenario: A hook Job that cannot be created holds the rollout at its point with a condition saying why
    Given a Job "web-2-mid" that is not a hook Job
    And the Deployment "web" has the lifecycle hooks:
      | hook | point |
      | mid  | 50%   |
    When the Deployment "web" is updated to the image "registry.k8s.io/pause:3.11"
    Then after 120 seconds the Deployment "web" has still not rolled out
    And the Deployment "web" has the condition "LifecycleHooks" "False" with reason "LifecycleHookJobFailedCreate"
    And a Warning event "FailedCreate" is recorded for the Deployment "web"
    And the rollout invariants held at every recorded state of the Deployment "web"

  @must @RH_BAD_002
  Scenario: A hook Job deleted by someone else before it finished counts as failed
    Given the Deployment "web" has the lifecycle hooks:
      | hook | point | duration |
      | mid  | 50%   | 5m       |
    And the Deployment "web" has been updated to the image "registry.k8s.io/pause:3.11" and the hook Job "web-2-mid" is running
    When the hook Job "web-2-mid" is deleted by someone else
    Then after 60 seconds the Deployment "web" has still not rolled out
    And the Deployment "web" has the condition "Progressing" "False" with reason "LifecycleHookFailed"
    And a Warning event "LifecycleHookFailed" is recorded for the Deployment "web"

  # reference/rollout-hooks-and-bdd-style.md A5: a change of spec.replicas can move percentage points
  # past the new revision's progress; every passed group then runs before any further scaling.
  @must @RH_BAD_003
  Scenario: Fewer replicas mid-rollout move a pending point behind the progress, and its hook still runs
    Given the Deployment "web" has the lifecycle hooks:
      | hook | point | duration |
      | mid  | 50%   | 1m       |
      | late | 75%   |          |
    And the Deployment "web" has been updated to the image "registry.k8s.io/pause:3.11" and the hook Job "web-2-mid" is running
    When the Deployment "web" is changed to 2 replicas mid-rollout
    Then within 600 seconds the Deployment "web" has rolled out
    And the hooks of the Deployment "web" ran in this order:
      | hook | new available |
      | late | 2             |
