@machine_controller
Feature: Which Pods a drain evicts, skips or waits for
  Cluster API drains a Node as kubectl drain does, in passes 20 seconds apart (seed 001 "Node drain"):
  it cordons the Node, then sorts its Pods. DaemonSet Pods, mirror Pods and Pods labelled
  cluster.x-k8s.io/drain=skip are skipped; Pods labelled cluster.x-k8s.io/drain=wait-completed are
  waited for without eviction; every other Pod is evicted, all at once by default. The drain is
  complete when no Pod it evicts or waits for is left on the Node.

  Background:
    Given a Cluster "c1" whose control plane Machine "cp-0" is running

  @seed_001 @must @MD_DRAIN_001
  Scenario: The drain cordons the Node, which brings the unschedulable taint
    Given a running Machine "m1"
    And the Node of "m1" runs a Pod "default/web-0" with a termination grace period of 60 seconds
    When the Machine "m1" is deleted
    Then the Node of "m1" is cordoned
    And the Node of "m1" has the taint "node.kubernetes.io/unschedulable:NoSchedule"

  @seed_001 @should @MD_DRAIN_002
  Scenario: Evicted Pods of a ReplicaSet come back on other Nodes, not on the cordoned one
    Given a running Machine "m1"
    And a ReplicaSet "default/web" runs 2 Pods on the Node of "m1"
    When the Machine "m1" is deleted
    Then within 120 seconds the ReplicaSet "default/web" has 2 running Pods, none of them on the Node of "m1"

  @seed_001 @should @MD_DRAIN_003
  Scenario: Pods that tolerate the cordon come back to the Node and are evicted again and again
    Given a running Machine "m1"
    And a ReplicaSet "default/sticky" runs 1 Pod pinned to the Node of "m1" and tolerating its cordon
    When the Machine "m1" is deleted
    Then within 300 seconds the Pods of the ReplicaSet "default/sticky" have been evicted 3 times
    And the Machine "m1" is deleting with reason "DrainingNode"

  @seed_001 @must @MD_DRAIN_004
  Scenario: Pods of an existing DaemonSet are neither evicted nor waited for
    Given a running Machine "m1"
    And the Node of "m1" runs the Pods:
      | pod                     | owner               |
      | kube-system/node-logs-1 | DaemonSet node-logs |
      | default/web-0           |                     |
    When the Machine "m1" is deleted
    Then within 60 seconds the Node of "m1" is drained
    And the Pod "kube-system/node-logs-1" is not evicted
    And the Pod "default/web-0" is evicted

  @seed_001 @must @MD_DRAIN_005
  Scenario: Pods whose DaemonSet is gone are evicted
    Given a running Machine "m1"
    And the garbage collector is switched off
    And the Node of "m1" runs the Pods:
      | pod                     | owner                         |
      | kube-system/node-logs-1 | DaemonSet node-logs (deleted) |
    When the Machine "m1" is deleted
    Then the Pod "kube-system/node-logs-1" is evicted

  @seed_001 @must @MD_DRAIN_006
  Scenario: Mirror Pods are neither evicted nor waited for
    Given a running Machine "m1"
    And the Node of "m1" runs the Pods:
      | pod                           | annotations                                                  |
      | kube-system/kube-apiserver-m1 | kubernetes.io/config.mirror=0f5d8c7bd4a1e0c3f3d8c7bd4a1e0c3f |
      | default/web-0                 |                                                              |
    When the Machine "m1" is deleted
    Then within 60 seconds the Node of "m1" is drained
    And the Pod "kube-system/kube-apiserver-m1" is not evicted
    And the Pod "default/web-0" is evicted

  @seed_001 @must @MD_DRAIN_007
  Scenario Outline: A Pod labelled cluster.x-k8s.io/drain=<value> is neither evicted nor waited for
    Given a running Machine "m1"
    And the Node of "m1" runs a Pod "default/keep-0" labelled "cluster.x-k8s.io/drain=<value>"
    When the Machine "m1" is deleted
    Then within 60 seconds the Node of "m1" is drained
    And the Pod "default/keep-0" is not evicted

    Examples:
      | case  | value |
      | lower | skip  |
      | title | Skip  |
      | upper | SKIP  |
      | mixed | sKiP  |

  @seed_001 @must @MD_DRAIN_008
  Scenario Outline: A Pod labelled cluster.x-k8s.io/drain=<value> is waited for without being evicted
    Given a running Machine "m1"
    And the Node of "m1" runs a Pod "default/batch-0" labelled "cluster.x-k8s.io/drain=<value>"
    When the Machine "m1" is deleted
    Then the Pod "default/batch-0" is not evicted
    And the Pod "default/batch-0" is still running
    And the Machine "m1" is deleting with reason "DrainingNode" and the message:
      """
      Drain not completed yet (started at <drain start>):
      * Pod default/batch-0: waiting for completion
      """

    Examples:
      | case    | value          |
      | lower   | wait-completed |
      | title   | Wait-Completed |
      | upper   | WAIT-COMPLETED |
      | no-dash | WaitCompleted  |

  @seed_001 @must @MD_DRAIN_009
  Scenario: The drain completes once the Pods it waits for are gone
    Given a running Machine "m1"
    And the Node of "m1" runs a Pod "default/batch-0" labelled "cluster.x-k8s.io/drain=wait-completed"
    And the Machine "m1" has been deleted
    When the Pod "default/batch-0" finishes and is removed by its owner
    Then within 20 seconds the Node of "m1" is drained

  # seeds/001_6948c2535bf9c9aa.txt "Node drain" says the drain waits for these Pods' "completion". We follow
  # upstream: the drain waits until the Pod object is gone, whatever its phase.
  @seed_001 @should @MD_DRAIN_010
  Scenario: A wait-completed Pod that has finished but still exists keeps the drain waiting
    Given a running Machine "m1"
    And the Node of "m1" runs a Pod "default/batch-0" labelled "cluster.x-k8s.io/drain=wait-completed" that finishes after 60 seconds
    And the Machine "m1" has been deleted
    When 10 minutes pass
    Then the Pod "default/batch-0" has finished
    And the Machine "m1" is deleting with reason "DrainingNode" and the message:
      """
      Drain not completed yet (started at <drain start>):
      * Pod default/batch-0: waiting for completion
      """

  @seed_001 @must @MD_DRAIN_011
  Scenario: Every other Pod is evicted
    Given a running Machine "m1"
    And the Node of "m1" runs the Pods:
      | pod            | owner          |
      | default/bare-0 |                |
      | default/db-0   | StatefulSet db |
    And a ReplicaSet "default/web" runs 1 Pod on the Node of "m1"
    And the Node of "m1" runs a Pod "default/report-0" labelled "app=report" that finishes after 0 seconds
    When the Machine "m1" is deleted
    Then the Pod "default/bare-0" is evicted
    And the Pod "default/db-0" is evicted
    And the Pods of the ReplicaSet "default/web" on the Node of "m1" are evicted
    And the Pod "default/report-0" is evicted

  @seed_001 @must @MD_DRAIN_012
  Scenario: The drain is complete when no Pod is left to drain
    Given a running Machine "m1"
    And the Node of "m1" runs a Pod "default/web-0"
    When the Machine "m1" is deleted
    Then within 60 seconds the Node of "m1" is drained
    And a Normal event "SuccessfulDrainNode" is recorded for the Machine "m1" with the message:
      """
      success draining Machine's node "m1"
      """

  @seed_001 @must @MD_DRAIN_013
  Scenario: An evicted Pod holds the drain until its object is gone
    Given a running Machine "m1"
    And the Node of "m1" runs a Pod "default/slow-0" with a termination grace period of 120 seconds
    And the Machine "m1" has been deleted
    When 60 seconds pass
    Then the Pod "default/slow-0" is evicted
    And the Machine "m1" is deleting with reason "DrainingNode" and the message:
      """
      Drain not completed yet (started at <drain start>):
      * Pod default/slow-0: deletionTimestamp set, but still not removed from the Node
      """
    And within 100 seconds the Node of "m1" is drained

  @seed_001 @must @MD_DRAIN_014
  Scenario: Without MachineDrainRules all Pods are evicted in the same pass
    Given a running Machine "m1"
    And the Node of "m1" runs the Pods:
      | pod           | grace |
      | default/web-0 | 60    |
      | default/web-1 | 60    |
      | shop/cart-0   | 60    |
    When the Machine "m1" is deleted
    Then the Pod "default/web-0" is evicted
    And the Pod "default/web-1" is evicted
    And the Pod "shop/cart-0" is evicted
    And the Machine "m1" is deleting with reason "DrainingNode" and the message:
      """
      Drain not completed yet (started at <drain start>):
      * Pods default/web-0, default/web-1, shop/cart-0: deletionTimestamp set, but still not removed from the Node
      """
