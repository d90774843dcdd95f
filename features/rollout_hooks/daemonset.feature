@rollout_daemonset @seed_004
Feature: The reference DaemonSet controller rolls out with lifecycle hooks
  A DaemonSet runs one Pod per eligible Node; maxUnavailable and maxSurge both round up against the
  number of eligible Nodes (reference/rollout-hooks-and-bdd-style.md A4). Progress points count the
  Nodes whose Pod is updated and available; which Nodes go first is unspecified upstream (Go map order),
  so these scenarios assert counts, never Node names.

  Background:
    Given a Node "n1" that is Ready
    And a Node "n2" that is Ready
    And a Node "n3" that is Ready
    And a Node "n4" that is Ready

  @must @RH_DS_001
  Scenario Outline: On 4 Nodes with maxSurge <surge> and maxUnavailable <unavailable> the rollout stays within <most> Pods and <least> available
    Given a DaemonSet "agent" with maxSurge "<surge>" and maxUnavailable "<unavailable>" that has rolled out
    When the DaemonSet "agent" is updated to the image "registry.k8s.io/pause:3.11"
    Then within 900 seconds the DaemonSet "agent" has rolled out
    And the rollout of the DaemonSet "agent" peaked at <most> Pods and bottomed out at <least> available
    And the rollout invariants held at every recorded state of the DaemonSet "agent"

    Examples:
      | case           | surge | unavailable | most | least |
      | one-at-a-time  | 0     | 1           | 4    | 3     |
      | thirty-up      | 0     | 30%         | 4    | 2     |
      | surge-one      | 1     | 0           | 5    | 4     |
      | surge-thirty   | 30%   | 0           | 6    | 4     |

  @must @RH_DS_002
  Scenario: A hook at 50% of 4 Nodes runs when 2 updated Pods are available, and the counts say so
    Given a DaemonSet "agent" with maxSurge "0" and maxUnavailable "1" that has rolled out
    And the DaemonSet "agent" has the lifecycle hooks:
      | hook | point | duration |
      | mid  | 50%   | 2m       |
    And the DaemonSet "agent" has been updated to the image "registry.k8s.io/pause:3.11" and the hook Job "agent-2-mid" is running
    Then the DaemonSet "agent" has the status:
      | field                  | value |
      | desiredNumberScheduled | 4     |
      | currentNumberScheduled | 4     |
      | updatedNumberScheduled | 2     |
      | numberAvailable        | 4     |
      | numberUnavailable      | 0     |
    And the DaemonSet "agent" has the condition "LifecycleHooks" "True" with reason "LifecycleHookRunning"
    And within 900 seconds the DaemonSet "agent" has rolled out
    And the hook Job "agent-2-mid" belongs to the ControllerRevision of revision 2 and is labelled with it

  @must @RH_DS_003
  Scenario: DaemonSet hooks run in order of their points and nothing changes while one runs
    Given a DaemonSet "agent" with maxSurge "0" and maxUnavailable "2" that has rolled out
    And the DaemonSet "agent" has the lifecycle hooks:
      | hook  | point |
      | pre   | 0%    |
      | one   | 1     |
      | three | 75%   |
    When the DaemonSet "agent" is updated to the image "registry.k8s.io/pause:3.11"
    Then within 900 seconds the DaemonSet "agent" has rolled out
    And the hooks of the DaemonSet "agent" ran in this order:
      | hook  | new available |
      | pre   | 0             |
      | one   | 1             |
      | three | 3             |
    And the rollout invariants held at every recorded state of the DaemonSet "agent"

  # 30% and 40% of 4 Nodes both resolve to 2: two points, so two groups, the lower value first.
  @must @RH_DS_003
  Scenario: Two DaemonSet points that resolve to the same count run one after the other, the lower first
    Given a DaemonSet "agent" with maxSurge "0" and maxUnavailable "2" that has rolled out
    And the DaemonSet "agent" has the lifecycle hooks:
      | hook   | point |
      | forty  | 40%   |
      | thirty | 30%   |
    When the DaemonSet "agent" is updated to the image "registry.k8s.io/pause:3.11"
    Then within 900 seconds the DaemonSet "agent" has rolled out
    And the hooks of the DaemonSet "agent" ran in this order:
      | hook   | new available |
      | thirty | 2             |
      | forty  | 2             |
    And the rollout invariants held at every recorded state of the DaemonSet "agent"

  @must @RH_DS_004
  Scenario: A controller restart while a DaemonSet hook runs neither runs it again nor touches a Pod
    Given a DaemonSet "agent" with maxSurge "1" and maxUnavailable "0" that has rolled out
    And the DaemonSet "agent" has the lifecycle hooks:
      | hook | point | duration |
      | mid  | 50%   | 2m       |
    And the DaemonSet "agent" has been updated to the image "registry.k8s.io/pause:3.11" and the hook Job "agent-2-mid" is running
    When the rollout controllers restart
    Then no hook of the DaemonSet "agent" ran since
    And nothing created or deleted Pods of the DaemonSet "agent"
    And within 900 seconds the DaemonSet "agent" has rolled out
    And the rollout invariants held at every recorded state of the DaemonSet "agent"
    And the hook Job "agent-2-mid" was created 1 time

  # DESIGN.md "Rollout decisions": rollover cancels running hook Jobs (they count as not succeeded for
  # retainPolicy; Never deletes every finished Job, the cancelled one included) and the new revision
  # starts its own sequence.
  @must @RH_DS_005
  Scenario: A new template while a DaemonSet hook runs cancels it, applies its retainPolicy, and the new revision runs its own hooks
    Given a DaemonSet "agent" with maxSurge "0" and maxUnavailable "1" that has rolled out
    And the DaemonSet "agent" has the lifecycle hooks:
      | hook | point | duration | retain |
      | mid  | 50%   | 5m       | Never  |
    And the DaemonSet "agent" has been updated to the image "registry.k8s.io/pause:3.11" and the hook Job "agent-2-mid" is running
    When the DaemonSet "agent" is updated to the image "registry.k8s.io/pause:3.12"
    Then the Job "agent-2-mid" is gone
    And within 1800 seconds the DaemonSet "agent" has rolled out
    And the hooks of the DaemonSet "agent" ran in this order:
      | hook | new available |
      | mid  | 2             |
    And the hook Job "agent-3-mid" was created 1 time
    And the rollout invariants held at every recorded state of the DaemonSet "agent"

  @must @RH_DS_007
  Scenario: A failed Abort hook freezes the DaemonSet at its point with a condition saying why
    Given a DaemonSet "agent" with maxSurge "0" and maxUnavailable "1" that has rolled out
    And the DaemonSet "agent" has the lifecycle hooks:
      | hook | point | policy | result |
      | mid  | 50%   | Abort  | Failed |
    When the DaemonSet "agent" is updated to the image "registry.k8s.io/pause:3.11"
    Then after 300 seconds the DaemonSet "agent" has still not rolled out
    And the DaemonSet "agent" has the condition "LifecycleHooks" "False" with reason "LifecycleHookFailed"
    And a Warning event "LifecycleHookFailed" is recorded for the DaemonSet "agent"
    And the DaemonSet "agent" has the status:
      | field                  | value |
      | desiredNumberScheduled | 4     |
      | updatedNumberScheduled | 2     |
    And the rollout invariants held at every recorded state of the DaemonSet "agent"

  @must @RH_DS_006
  Scenario Outline: A DaemonSet hook with <what> is refused at admission, naming the field
    When a DaemonSet "agent" with these lifecycle hooks is created:
      | hook   | point   |
      | first  | 1       |
      | <name> | <point> |
    Then the write is refused with 422 "Invalid" and the message:
      """
      DaemonSet.apps "agent" is invalid: <field>: <message>
      """

    Examples:
      | case      | what                | name   | point | field                                                                | message                                                       |
      | duplicate | a name already used | first  | 2     | spec.lifecycleHooks[1].name                                          | Duplicate value: "first"                                      |
      | over-100  | a point over 100%   | second | 150%  | spec.lifecycleHooks[1].trigger.progressAvailableParams.progressPoint | Invalid value: "150%": must be between 0% and 100%, inclusive |
