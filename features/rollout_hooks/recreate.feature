@rollout_deployment @seed_004
Feature: Hooks with the Recreate strategy
  The algorithm applies to every update strategy (seed 004 "Algorithm"). With Recreate the new
  ReplicaSet exists (at 0 replicas) before the old one is scaled down, so the 0% hook runs while the
  old version still serves; later points are reached with the old version gone.

  Background:
    Given a Node "n1" that is Ready

  @must @RH_RECREATE_001
  Scenario: The pre hook runs before the old Pods stop, the mid hook with half of the new ones available
    Given a Deployment "web" with 4 replicas and the Recreate strategy that has rolled out
    And the Deployment "web" has the lifecycle hooks:
      | hook | point |
      | pre  | 0%    |
      | mid  | 50%   |
    When the Deployment "web" is updated to the image "registry.k8s.io/pause:3.11"
    Then within 600 seconds the Deployment "web" has rolled out
    And the hooks of the Deployment "web" ran in this order:
      | hook | new available | new replicas | old replicas |
      | pre  | 0             | 0            | 4            |
      | mid  | 2             | 2            | 0            |
    And the rollout invariants held at every recorded state of the Deployment "web"
