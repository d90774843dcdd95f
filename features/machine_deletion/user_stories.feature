@machine_controller
Feature: The user stories of the machine deletion phase hooks, end to end
  Seed 000 ("User Stories") motivates the two lifecycle hooks with two operators' stories. Each is told
  here from start to end, as the operator (the hook owner) and the machine controller take turns.

  Background:
    Given a Cluster "c1" whose control plane Machine "cp-0" is running

  # Story 1 (pre-terminate): keep the instance of a deleted control plane Machine, and its disk for disaster
  # recovery, until the replacement has joined the cluster.
  @seed_000 @must @MD_STORY_001
  Scenario: An operator keeps the old control plane instance until its replacement has joined
    Given a running control plane Machine "cp-1" annotated "pre-terminate.delete.hook.machine.cluster.x-k8s.io/wait-for-replacement: cp-replacement-operator"
    And the Node of "cp-1" runs a Pod "default/web-0"
    When the Machine "cp-1" is deleted
    Then the Pod "default/web-0" is evicted
    And within 60 seconds the Machine "cp-1" is deleting with reason "WaitingForPreTerminateHook"
    When 30 minutes pass
    Then the FakeMachine "cp-1" exists and is not marked for deletion
    When a replacement control plane Machine "cp-2" is created and its Node joins the cluster
    And the hook owner "cp-replacement-operator" finishes its work and removes the annotation "pre-terminate.delete.hook.machine.cluster.x-k8s.io/wait-for-replacement"
    Then within 60 seconds the Machine "cp-1" is gone
    And the FakeMachine "cp-1" was deleted only after the Node "cp-2" was Ready

  # Story 2 (pre-drain): drain Nodes with the operator's own controller instead of the machine controller's
  # built-in drain.
  @seed_000 @must @MD_STORY_002
  Scenario: An operator drains the Node with their own controller behind a pre-drain hook
    Given a running Machine "m1" annotated "pre-drain.delete.hook.machine.cluster.x-k8s.io/custom-drain: my-drain-controller"
    And the Node of "m1" runs the Pods:
      | pod           | labels   |
      | default/web-0 | app=web  |
      | shop/cart-0   | app=cart |
    When the Machine "m1" is deleted
    Then the Machine "m1" is deleting with reason "WaitingForPreDrainHook"
    And the Node of "m1" was never cordoned
    When the hook owner "my-drain-controller" drains the Node of "m1" itself
    Then within 60 seconds the Pod "default/web-0" is gone from the workload cluster
    And the Pod "shop/cart-0" is gone from the workload cluster
    When the hook owner "my-drain-controller" finishes its work and removes the annotation "pre-drain.delete.hook.machine.cluster.x-k8s.io/custom-drain"
    Then within 60 seconds the Machine "m1" is gone
    And every eviction from the Node of "m1" was made by the hook owner "my-drain-controller"
