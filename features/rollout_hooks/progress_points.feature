@rollout_deployment @seed_004
Feature: Progress points and the order hooks run in
  A hook runs when the new revision has reached its progress point: an integer is a count of new
  available replicas, a percentage p% of R replicas is the closest point at or after it, ceil(p*R/100)
  (seed 004 "API Objects", ProgressPoint; DESIGN.md "Rollout decisions"). Hooks of an earlier point run
  and finish before any later one.

  Background:
    Given a Node "n1" that is Ready

  @must @RH_POINT_001
  Scenario Outline: A hook at <point> of <replicas> replicas runs when <count> new replicas are available
    Given a Deployment "web" with <replicas> replicas, maxSurge "1" and maxUnavailable "0" that has rolled out
    And the Deployment "web" has the lifecycle hooks:
      | hook  | point   |
      | check | <point> |
    When the Deployment "web" is updated to the image "registry.k8s.io/pause:3.11"
    Then within 600 seconds the Deployment "web" has rolled out
    And the hooks of the Deployment "web" ran in this order:
      | hook  | new available |
      | check | <count>       |

    Examples:
      | case           | replicas | point | count |
      | half-of-five   | 5        | 50%   | 3     |
      | fifth-of-five  | 5        | 20%   | 1     |
      | third-of-three | 3        | 33%   | 1     |
      | over-a-third   | 3        | 34%   | 2     |
      | forty-one      | 10       | 41%   | 5     |
      | one-percent    | 5        | 1%    | 1     |
      | none           | 5        | 0%    | 0     |
      | all            | 5        | 100%  | 5     |
      | int-two        | 5        | 2     | 2     |
      | int-all        | 4        | 4     | 4     |

  # DESIGN.md "Rollout decisions": points that resolve to the same count but differ in value run in
  # separate groups, the lower value first (seed 004 leaves it open).
  @must @RH_ORDER_001
  Scenario: Two percentages that resolve to the same count run one after the other, the lower first
    Given a Deployment "web" with 5 replicas, maxSurge "1" and maxUnavailable "0" that has rolled out
    And the Deployment "web" has the lifecycle hooks:
      | hook  | point |
      | sixty | 60%   |
      | fifty | 50%   |
    When the Deployment "web" is updated to the image "registry.k8s.io/pause:3.11"
    Then within 600 seconds the Deployment "web" has rolled out
    And the hooks of the Deployment "web" ran in this order:
      | hook  | new available |
      | fifty | 3             |
      | sixty | 3             |
    And the rollout invariants held at every recorded state of the Deployment "web"

  @must @RH_ORDER_002
  Scenario: Hooks whose points have the same value form one group and run in parallel
    Given a Deployment "web" with 5 replicas, maxSurge "1" and maxUnavailable "0" that has rolled out
    And the Deployment "web" has the lifecycle hooks:
      | hook  | point |
      | count | 2     |
      | share | 40%   |
    When the Deployment "web" is updated to the image "registry.k8s.io/pause:3.11"
    Then within 600 seconds the Deployment "web" has rolled out
    And the hooks of the Deployment "web" ran in this order:
      | hook  | new available |
      | count | 2             |
      | share | 2             |
    And the hook Jobs "web-2-count" and "web-2-share" ran at the same time
    And the rollout invariants held at every recorded state of the Deployment "web"

  # DESIGN.md: 0% is the pre hook (once the new revision exists, before any scaling); 100% fires when
  # the new revision reaches R available, without waiting for old pods to reach 0.
  @must @RH_STOP_001 @RH_PRE_001 @RH_POST_001
  Scenario Outline: The rollout stops exactly at each point with maxSurge <surge> and maxUnavailable <unavailable>
    Given a Deployment "web" with 4 replicas, maxSurge "<surge>" and maxUnavailable "<unavailable>" that has rolled out
    And the Deployment "web" has the lifecycle hooks:
      | hook | point |
      | pre  | 0%    |
      | mid  | 50%   |
      | post | 100%  |
    When the Deployment "web" is updated to the image "registry.k8s.io/pause:3.11"
    Then within 600 seconds the Deployment "web" has rolled out
    And the hooks of the Deployment "web" ran in this order:
      | hook | new available | new replicas | old replicas |
      | pre  | 0             | 0            | 4            |
      | mid  | 2             | 2            | <old at mid> |
      | post | 4             | 4            | <old at end> |
    And the rollout invariants held at every recorded state of the Deployment "web"

    Examples:
      | case          | surge | unavailable | old at mid | old at end |
      | surge-only    | 1     | 0           | 3          | 1          |
      | unavailable   | 0     | 1           | 2          | 0          |
      | quarter-each  | 25%   | 25%         | 3          | 1          |
