@rollout_deployment @seed_004
Feature: A failing hook
  "Abort" - failure for this hook is fatal, the deployment becomes perma-failed; "Ignore" - the
  deployment continues rolling out the new version (seed 004 "API Objects", "Algorithm" step 3).
  DESIGN.md: Abort records a Warning event and Progressing=False with reason LifecycleHookFailed, the
  rollout stays frozen, nothing rolls back automatically, and no later hook runs.

  Background:
    Given a Node "n1" that is Ready
    And a Deployment "web" with 4 replicas, maxSurge "1" and maxUnavailable "0" that has rolled out

  @must @RH_FAIL_001
  Scenario: A failed hook with failurePolicy Abort freezes the rollout for good
    Given the Deployment "web" has the lifecycle hooks:
      | hook | point | policy | result |
      | mid  | 50%   | Abort  | Failed |
      | post | 100%  |        |        |
    When the Deployment "web" is updated to the image "registry.k8s.io/pause:3.11"
    Then after 600 seconds the Deployment "web" has still not rolled out
    And the Deployment "web" has the condition "Progressing" "False" with reason "LifecycleHookFailed"
    And the Deployment "web" has the condition "LifecycleHooks" "False" with reason "LifecycleHookFailed"
    And a Warning event "LifecycleHookFailed" is recorded for the Deployment "web"
    And the hooks of the Deployment "web" ran in this order:
      | hook | new available | new replicas | old replicas |
      | mid  | 2             | 2            | 3            |
    And the rollout invariants held at every recorded state of the Deployment "web"

  @must @RH_FAIL_002
  Scenario: A failed hook with failurePolicy Ignore only records a Warning event
    Given the Deployment "web" has the lifecycle hooks:
      | hook | point | policy | result |
      | mid  | 50%   | Ignore | Failed |
      | post | 100%  |        |        |
    When the Deployment "web" is updated to the image "registry.k8s.io/pause:3.11"
    Then within 600 seconds the Deployment "web" has rolled out
    And a Warning event "LifecycleHookFailed" is recorded for the Deployment "web"
    And the hooks of the Deployment "web" ran in this order:
      | hook |
      | mid  |
      | post |

  # DESIGN.md "Rollout decisions": when one hook of a parallel group aborts, its siblings are cancelled.
  @should @RH_FAIL_003
  Scenario: When one hook of a group aborts, the others of the group are cancelled
    Given the Deployment "web" has the lifecycle hooks:
      | hook   | point | result | duration |
      | fast   | 50%   | Failed | 5s       |
      | slow   | 50%   |        | 10m      |
    When the Deployment "web" is updated to the image "registry.k8s.io/pause:3.11"
    Then after 120 seconds the Deployment "web" has still not rolled out
    And the hook Job "web-2-slow" is suspended
    And the Deployment "web" has the condition "Progressing" "False" with reason "LifecycleHookFailed"
