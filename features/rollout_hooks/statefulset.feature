@rollout_statefulset @seed_004
Feature: The reference StatefulSet controller rolls out with lifecycle hooks
  A StatefulSet replaces its Pods from the highest ordinal down (reference/rollout-hooks-and-bdd-style.md
  A4); a hook's point P becomes the effective partition max(partition, replicas - P), and the rollout
  pauses there until the hook group finished (A5). The new available replicas are the Pods at the
  update revision that are available; hook Jobs belong to the update revision's ControllerRevision.

  Background:
    Given a Node "n1" that is Ready

  @must @RH_STS_001
  Scenario: OrderedReady replaces one Pod at a time, highest ordinal first, and stops at each point
    Given a StatefulSet "db" with 4 replicas, the OrderedReady pod management policy and maxUnavailable "1" that has rolled out
    And the StatefulSet "db" has the lifecycle hooks:
      | hook | point |
      | mid  | 50%   |
    When the StatefulSet "db" is updated to the image "registry.k8s.io/pause:3.11"
    Then within 900 seconds the StatefulSet "db" has rolled out
    And the StatefulSet "db" replaced its Pods in the order "db-3, db-2, db-1, db-0"
    And the hooks of the StatefulSet "db" ran in this order:
      | hook | new available |
      | mid  | 2             |
    And the rollout of the StatefulSet "db" peaked at 4 Pods and bottomed out at 3 available
    And the rollout invariants held at every recorded state of the StatefulSet "db"
    And the hook Job "db-2-mid" belongs to the ControllerRevision of revision 2 and is labelled with it

  # maxUnavailable is floored and at least 1 (the code, although the field's doc says rounded up):
  # 50% of 4 is 2 Pods replaced at once.
  @must @RH_STS_002
  Scenario: Parallel replaces up to maxUnavailable Pods at once and still stops at the point
    Given a StatefulSet "db" with 4 replicas, the Parallel pod management policy and maxUnavailable "50%" that has rolled out
    And the StatefulSet "db" has the lifecycle hooks:
      | hook | point |
      | mid  | 2     |
    When the StatefulSet "db" is updated to the image "registry.k8s.io/pause:3.11"
    Then within 900 seconds the StatefulSet "db" has rolled out
    And the StatefulSet "db" replaced its Pods in the order "db-3, db-2, db-1, db-0"
    And the hooks of the StatefulSet "db" ran in this order:
      | hook | new available |
      | mid  | 2             |
    And the rollout of the StatefulSet "db" peaked at 4 Pods and bottomed out at 2 available
    And the rollout invariants held at every recorded state of the StatefulSet "db"

  # 75% of 4 is 3 Pods at once, more than the point at 1 allows: the partition holds the update revision
  # at 1 until the hook finished, then the 3 others go together.
  @must @RH_STS_002
  Scenario: Parallel does not replace more Pods than the next point allows while its hook must still run
    Given a StatefulSet "db" with 4 replicas, the Parallel pod management policy and maxUnavailable "75%" that has rolled out
    And the StatefulSet "db" has the lifecycle hooks:
      | hook  | point |
      | first | 1     |
    When the StatefulSet "db" is updated to the image "registry.k8s.io/pause:3.11"
    Then within 900 seconds the StatefulSet "db" has rolled out
    And the hooks of the StatefulSet "db" ran in this order:
      | hook  | new available |
      | first | 1             |
    And the rollout invariants held at every recorded state of the StatefulSet "db"

  @must @RH_STS_003
  Scenario: A user partition that leaves a point out of reach is reported, and the hook does not run
    Given a StatefulSet "db" with 4 replicas, the OrderedReady pod management policy and maxUnavailable "1" that has rolled out
    And the StatefulSet "db" has the partition 3
    And the StatefulSet "db" has the lifecycle hooks:
      | hook | point |
      | mid  | 50%   |
    When the StatefulSet "db" is updated to the image "registry.k8s.io/pause:3.11"
    Then within 300 seconds the StatefulSet "db" has updated exactly the Pods "db-3"
    And the StatefulSet "db" has the condition "LifecycleHooks" "False" with reason "LifecycleHookUnreachable"
    And no hook of the StatefulSet "db" ran since
    And the rollout invariants held at every recorded state of the StatefulSet "db"

  # A StatefulSet goes back by taking an older ControllerRevision's template (kubectl rollout undo); the
  # revision is renumbered, so its hooks run again for the new number, as a rollback.
  @must @RH_STS_004
  Scenario: Going back to an older revision's template runs the hooks with K8S_ROLLOUT_TYPE=ROLLBACK
    Given a StatefulSet "db" with 3 replicas, the OrderedReady pod management policy and maxUnavailable "1" that has rolled out
    And the StatefulSet "db" has the lifecycle hooks:
      | hook  | point |
      | check | 100%  |
    And the StatefulSet "db" has been updated to the image "registry.k8s.io/pause:3.11" and has rolled out
    When the StatefulSet "db" is rolled back to revision 1
    Then within 900 seconds the StatefulSet "db" has rolled out
    And the hook Job "db-3-check" belongs to the ControllerRevision of revision 3 and is labelled with it
    And the hook Job "db-3-check" has the environment:
      | name                    | value        |
      | K8S_ROLLOUT_TYPE        | ROLLBACK     |
      | K8S_ROLLOUT_FROM_OBJECT | <revision 2> |
      | K8S_ROLLOUT_TO_OBJECT   | <revision 3> |
    And the hook Job "db-2-check" has the environment:
      | name             | value   |
      | K8S_ROLLOUT_TYPE | ROLLOUT |

  @must @RH_STS_005
  Scenario: A controller restart while a StatefulSet hook runs neither runs it again nor touches a Pod
    Given a StatefulSet "db" with 4 replicas, the OrderedReady pod management policy and maxUnavailable "1" that has rolled out
    And the StatefulSet "db" has the lifecycle hooks:
      | hook | point | duration |
      | mid  | 50%   | 2m       |
    And the StatefulSet "db" has been updated to the image "registry.k8s.io/pause:3.11" and the hook Job "db-2-mid" is running
    When the rollout controllers restart
    Then no hook of the StatefulSet "db" ran since
    And nothing created or deleted Pods of the StatefulSet "db"
    And within 900 seconds the StatefulSet "db" has rolled out
    And the rollout invariants held at every recorded state of the StatefulSet "db"
    And the hook Job "db-2-mid" was created 1 time

  @must @RH_STS_006
  Scenario: A failed Abort hook freezes the StatefulSet at its point with a condition saying why
    Given a StatefulSet "db" with 4 replicas, the OrderedReady pod management policy and maxUnavailable "1" that has rolled out
    And the StatefulSet "db" has the lifecycle hooks:
      | hook | point | policy | result |
      | mid  | 50%   | Abort  | Failed |
    When the StatefulSet "db" is updated to the image "registry.k8s.io/pause:3.11"
    Then after 300 seconds the StatefulSet "db" has still not rolled out
    And the StatefulSet "db" has the condition "LifecycleHooks" "False" with reason "LifecycleHookFailed"
    And a Warning event "LifecycleHookFailed" is recorded for the StatefulSet "db"
    And the StatefulSet "db" has the status:
      | field           | value |
      | updatedReplicas | 2     |
      | replicas        | 4     |
    And the rollout invariants held at every recorded state of the StatefulSet "db"

  # DESIGN.md "Rollout decisions": rollover cancels running hook Jobs (suspended; they count as not
  # succeeded for retainPolicy, so OnFailure keeps the cancelled one and deletes the new revision's, which
  # succeeds) and the new revision starts its own sequence.
  @must @RH_STS_007
  Scenario: A new template while a StatefulSet hook runs cancels it, retains it as not succeeded, and the new revision runs its own hooks
    Given a StatefulSet "db" with 4 replicas, the OrderedReady pod management policy and maxUnavailable "1" that has rolled out
    And the StatefulSet "db" has the lifecycle hooks:
      | hook | point | duration | retain    |
      | mid  | 50%   | 5m       | OnFailure |
    And the StatefulSet "db" has been updated to the image "registry.k8s.io/pause:3.11" and the hook Job "db-2-mid" is running
    When the StatefulSet "db" is updated to the image "registry.k8s.io/pause:3.12"
    Then the hook Job "db-2-mid" is suspended
    And within 1800 seconds the StatefulSet "db" has rolled out
    And the hooks of the StatefulSet "db" ran in this order:
      | hook | new available |
      | mid  | 2             |
    And the hook Job "db-3-mid" was created 1 time
    And the hook Job "db-2-mid" is suspended
    And the Job "db-3-mid" is gone
    And the rollout invariants held at every recorded state of the StatefulSet "db"

  @must @RH_STS_008
  Scenario Outline: A StatefulSet hook with <what> is refused at admission, naming the field
    When a StatefulSet "db" with these lifecycle hooks is created:
      | hook   | point   |
      | first  | 1       |
      | <name> | <point> |
    Then the write is refused with 422 "Invalid" and the message:
      """
      StatefulSet.apps "db" is invalid: <field>: <message>
      """

    Examples:
      | case          | what                      | name   | point | field                                                                | message                                                              |
      | duplicate     | a name already used       | first  | 2     | spec.lifecycleHooks[1].name                                          | Duplicate value: "first"                                             |
      | past-replicas | a point past the replicas | second | 4     | spec.lifecycleHooks[1].trigger.progressAvailableParams.progressPoint | Invalid value: 4: must be between 0 and 3 (spec.replicas), inclusive |
