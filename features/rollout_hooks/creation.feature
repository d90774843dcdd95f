@seed_004
Feature: Creating a workload is not an update
  Seed 004 runs a hook when "the update" reaches its progress point, and tells the hook the object the
  rollout comes from ("namespace/name"); a workload being created has neither. Decision
  (features/behaviors.yaml RH_CREATE_001): creating a workload runs no hook, as Argo Rollouts skips its
  steps on a first deployment; its first update runs them. A workload without hooks gets no Job at all.

  Background:
    Given a Node "n1" that is Ready

  @rollout_deployment @must @RH_CREATE_001
  Scenario: A Deployment created with lifecycle hooks runs none of them
    When a Deployment "web" with these lifecycle hooks is created:
      | hook  | point |
      | pre   | 0%    |
      | check | 50%   |
    Then within 600 seconds the Deployment "web" has rolled out
    And no hook of the Deployment "web" ran since
    And no Job was created since

  @rollout_deployment @must @RH_CREATE_001
  Scenario: The first update of a Deployment created with lifecycle hooks runs them
    Given a Deployment "web" with 3 replicas created with these lifecycle hooks that has rolled out:
      | hook  | point |
      | check | 2     |
    When the Deployment "web" is updated to the image "registry.k8s.io/pause:3.11"
    Then within 600 seconds the Deployment "web" has rolled out
    And the hooks of the Deployment "web" ran in this order:
      | hook  | new available |
      | check | 2             |
    And the rollout invariants held at every recorded state of the Deployment "web"

  @rollout_statefulset @must @RH_CREATE_002
  Scenario: A StatefulSet created with lifecycle hooks runs none of them
    When a StatefulSet "db" with these lifecycle hooks is created:
      | hook  | point |
      | check | 1     |
    Then within 600 seconds the StatefulSet "db" has rolled out
    And no hook of the StatefulSet "db" ran since
    And no Job was created since

  @rollout_daemonset @must @RH_CREATE_003
  Scenario: A DaemonSet created with lifecycle hooks runs none of them
    When a DaemonSet "agent" with these lifecycle hooks is created:
      | hook  | point |
      | check | 100%  |
    Then within 600 seconds the DaemonSet "agent" has rolled out
    And no hook of the DaemonSet "agent" ran since
    And no Job was created since

  @rollout_deployment @must @RH_NOHOOK_001
  Scenario: A Deployment without lifecycle hooks rolls out without any Job
    Given a Deployment "web" with 3 replicas, maxSurge "1" and maxUnavailable "0" that has rolled out
    When the Deployment "web" is updated to the image "registry.k8s.io/pause:3.11"
    Then within 600 seconds the Deployment "web" has rolled out
    And no Job was created since
