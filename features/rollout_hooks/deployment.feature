@rollout_deployment @seed_004
Feature: The reference Deployment controller rolls out as upstream does
  Without hooks the rollout follows Kubernetes 1.32: maxSurge rounds up, maxUnavailable rounds down,
  both 0 means maxUnavailable 1 (reference/rollout-hooks-and-bdd-style.md A4). Hooks stop it at
  points, they never change these bounds.

  Background:
    Given a Node "n1" that is Ready

  @must @RH_DEP_001
  Scenario Outline: With <replicas> replicas, maxSurge <surge> and maxUnavailable <unavailable> the rollout stays within <most> replicas and <least> available
    Given a Deployment "web" with <replicas> replicas, maxSurge "<surge>" and maxUnavailable "<unavailable>" that has rolled out
    When the Deployment "web" is updated to the image "registry.k8s.io/pause:3.11"
    Then within 600 seconds the Deployment "web" has rolled out
    And the rollout of the Deployment "web" peaked at <most> replicas and bottomed out at <least> available

    Examples:
      | case           | replicas | surge | unavailable | most | least |
      | quarter-each   | 4        | 25%   | 25%         | 5    | 3     |
      | surge-only     | 4        | 1     | 0           | 5    | 4     |
      | unavailable    | 4        | 0     | 1           | 4    | 3     |
      | thirty-of-ten  | 10       | 30%   | 30%         | 13   | 7     |
      | thirty-of-five | 5        | 30%   | 30%         | 7    | 4     |
      | both-round-0   | 3        | 0     | 10%         | 3    | 2     |

  @must @RH_DEP_003
  Scenario: A finished rollout reports the new ReplicaSet available and keeps the old one as history
    Given a Deployment "web" with 3 replicas, maxSurge "25%" and maxUnavailable "25%" that has rolled out
    When the Deployment "web" is updated to the image "registry.k8s.io/pause:3.11"
    Then within 600 seconds the Deployment "web" has rolled out
    And the Deployment "web" has the condition "Available" "True" with reason "MinimumReplicasAvailable" and message "Deployment has minimum availability."
    And the Deployment "web" has the condition "Progressing" "True" with reason "NewReplicaSetAvailable"
    And the Deployment "web" has 2 ReplicaSets
