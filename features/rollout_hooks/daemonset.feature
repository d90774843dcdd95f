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

  @must @RH_DS_004
  Scenario: A controller that starts while a DaemonSet hook runs neither runs it again nor touches a Pod
    Given a DaemonSet "agent" with maxSurge "1" and maxUnavailable "0" that has rolled out
    And the DaemonSet "agent" has the lifecycle hooks:
      | hook | point | duration |
      | mid  | 50%   | 2m       |
    And the DaemonSet "agent" has been updated to the image "registry.k8s.io/pause:3.11" and the hook Job "agent-2-mid" is running
    When a fresh instance of its controller reconciles the DaemonSet "agent"
    Then no hook of the DaemonSet "agent" ran since
    And nothing created or deleted Pods of the DaemonSet "agent"
    And within 900 seconds the DaemonSet "agent" has rolled out
    And the hook Job "agent-2-mid" was created 1 time
