@machine_controller
Feature: MachineDrainRules decide how Pods are drained, and in which order
  A MachineDrainRule (cluster.x-k8s.io) in the Machine's namespace says what the drain does with the
  Pods it selects: Drain (evict, in batches by order), Skip, or WaitCompleted (wait for the Pod to go,
  with order 0). Pods no rule selects are drained with order 0 (seed 001 "Node drain"). The first rule
  by name that applies to the Machine and selects the Pod decides; the cluster.x-k8s.io/drain label, and
  the DaemonSet and mirror Pod rules, come first (reference/capi-machine-deletion.md §2.2, §3).

  Background:
    Given a Cluster "c1" whose control plane Machine "cp-0" is running

  @seed_001 @must @MD_RULE_001
  Scenario: Pods a Skip rule selects are neither evicted nor waited for
    Given a running Machine "m1"
    And the MachineDrainRules:
      | rule       | behavior | pods      |
      | skip-cache | Skip     | app=cache |
    And the Node of "m1" runs the Pods:
      | pod             | labels    |
      | default/cache-0 | app=cache |
      | default/web-0   | app=web   |
    When the Machine "m1" is deleted
    Then within 60 seconds the Node of "m1" is drained
    And the Pod "default/cache-0" is not evicted
    And the Pod "default/web-0" is evicted

  @seed_001 @must @MD_RULE_002
  Scenario: Pods a WaitCompleted rule selects are waited for without being evicted
    Given a running Machine "m1"
    And the MachineDrainRules:
      | rule       | behavior      | pods      |
      | wait-batch | WaitCompleted | app=batch |
    And the Node of "m1" runs the Pods:
      | pod             | labels    |
      | default/batch-0 | app=batch |
    When the Machine "m1" is deleted
    Then the Pod "default/batch-0" is not evicted
    And the Pod "default/batch-0" is still running
    And the Machine "m1" is deleting with reason "DrainingNode" and the message:
      """
      Drain not completed yet (started at <drain start>):
      * Pod default/batch-0: waiting for completion
      """

  @seed_001 @must @MD_RULE_003
  Scenario: Pods a Drain rule selects are evicted
    Given a running Machine "m1"
    And the MachineDrainRules:
      | rule      | behavior | order | pods    |
      | drain-web | Drain    | 5     | app=web |
    And the Node of "m1" runs the Pods:
      | pod           | labels  |
      | default/web-0 | app=web |
    When the Machine "m1" is deleted
    Then the Pod "default/web-0" is evicted
    And within 60 seconds the Node of "m1" is drained

  # seeds/001_6948c2535bf9c9aa.txt "Node drain" drains the batches "from highest to lowest order". We follow
  # upstream (API documentation, book and code): the lowest order is drained first.
  @seed_001 @must @MD_RULE_004 @MD_RULE_006
  Scenario: Pods are drained in batches by order, the lowest first, and Pods no rule selects have order 0
    Given a running Machine "m1"
    And the MachineDrainRules:
      | rule        | behavior | order | pods      |
      | drain-db    | Drain    | 10    | app=db    |
      | drain-cache | Drain    | -10   | app=cache |
    And the Node of "m1" runs the Pods:
      | pod             | labels    |
      | default/db-0    | app=db    |
      | default/cache-0 | app=cache |
      | default/web-0   | app=web   |
    When the Machine "m1" is deleted
    Then the Pod "default/cache-0" is evicted
    And the Pod "default/web-0" is not evicted
    And the Pod "default/db-0" is not evicted
    And the Machine "m1" is deleting with reason "DrainingNode" and the message:
      """
      Drain not completed yet (started at <drain start>):
      * Pod default/cache-0: deletionTimestamp set, but still not removed from the Node
      After above Pods have been removed from the Node, the following Pods will be evicted: default/db-0, default/web-0
      """
    And within 180 seconds the Node of "m1" is drained
    And the Pod "default/web-0" was evicted only after the Pod "default/cache-0" was gone
    And the Pod "default/db-0" was evicted only after the Pod "default/web-0" was gone

  @seed_001 @must @MD_RULE_005
  Scenario: A Drain Pod of a higher order than 0 waits until the WaitCompleted Pods are gone
    Given a running Machine "m1"
    And the MachineDrainRules:
      | rule       | behavior      | order | pods      |
      | drain-late | Drain         | 5     | app=late  |
      | wait-batch | WaitCompleted |       | app=batch |
    And the Node of "m1" runs the Pods:
      | pod             | labels    |
      | default/batch-0 | app=batch |
      | default/late-0  | app=late  |
    When the Machine "m1" is deleted
    Then the Pod "default/late-0" is not evicted
    And the Machine "m1" is deleting with reason "DrainingNode" and the message:
      """
      Drain not completed yet (started at <drain start>):
      * Pod default/batch-0: waiting for completion
      After above Pods have been removed from the Node, the following Pods will be evicted: default/late-0
      """

  @seed_001 @must @MD_RULE_005
  Scenario: A Drain Pod of a lower order than 0 is evicted while the WaitCompleted Pods wait
    Given a running Machine "m1"
    And the MachineDrainRules:
      | rule        | behavior      | order | pods      |
      | drain-early | Drain         | -5    | app=early |
      | wait-batch  | WaitCompleted |       | app=batch |
    And the Node of "m1" runs the Pods:
      | pod             | labels    | grace |
      | default/batch-0 | app=batch | 30    |
      | default/early-0 | app=early | 60    |
    When the Machine "m1" is deleted
    Then the Pod "default/early-0" is evicted
    And the Pod "default/batch-0" is not evicted
    And the Machine "m1" is deleting with reason "DrainingNode" and the message:
      """
      Drain not completed yet (started at <drain start>):
      * Pod default/early-0: deletionTimestamp set, but still not removed from the Node
      After above Pods have been removed from the Node, waiting for the following Pods to complete without eviction: default/batch-0
      """

  @seed_001 @must @MD_RULE_007
  Scenario Outline: A rule applies only to the Machines and Clusters its selectors match (<case>)
    Given the Cluster "c1" has been relabelled "env=prod"
    And a running Machine "m1" with:
      | setting | value    |
      | label   | role=web |
    And the MachineDrainRules:
      | rule     | behavior | machines   | clusters   |
      | skip-all | Skip     | <machines> | <clusters> |
    And the Node of "m1" runs a Pod "default/web-0"
    When the Machine "m1" is deleted
    Then the Pod "default/web-0" <outcome>

    Examples:
      | case            | machines | clusters | outcome        |
      | machine-matches | role=web |          | is not evicted |
      | machine-differs | role=db  |          | is evicted     |
      | cluster-matches |          | env=prod | is not evicted |
      | cluster-differs |          | env=dev  | is evicted     |
      | both-match      | role=web | env=prod | is not evicted |
      | one-differs     | role=web | env=dev  | is evicted     |

  @seed_001 @must @MD_RULE_008
  Scenario: A rule in another namespace does not apply
    Given a running Machine "m1"
    And the MachineDrainRules:
      | rule           | behavior |
      | other/skip-all | Skip     |
    And the Node of "m1" runs a Pod "default/web-0"
    When the Machine "m1" is deleted
    Then the Pod "default/web-0" is evicted

  @seed_001 @must @MD_RULE_009
  Scenario Outline: When two rules select a Pod, the first by name decides (<case>)
    Given a running Machine "m1"
    And the MachineDrainRules:
      | rule    | behavior | pods    |
      | <skip>  | Skip     | app=web |
      | <drain> | Drain    | app=web |
    And the Node of "m1" runs a Pod "default/web-0" labelled "app=web"
    When the Machine "m1" is deleted
    Then the Pod "default/web-0" <outcome>

    Examples:
      | case        | skip   | drain   | outcome        |
      | skip-first  | a-skip | b-drain | is not evicted |
      | drain-first | b-skip | a-drain | is evicted     |

  @seed_001 @must @MD_RULE_010
  Scenario: The drain label comes before the rules
    Given a running Machine "m1"
    And the MachineDrainRules:
      | rule      | behavior | pods |
      | drain-all | Drain    |      |
    And the Node of "m1" runs a Pod "default/web-0" labelled "cluster.x-k8s.io/drain=skip"
    When the Machine "m1" is deleted
    Then within 60 seconds the Node of "m1" is drained
    And the Pod "default/web-0" is not evicted

  @seed_001 @must @MD_RULE_010
  Scenario: A Pod labelled wait-completed is waited for although a rule says Skip
    Given a running Machine "m1"
    And the MachineDrainRules:
      | rule     | behavior | pods |
      | skip-all | Skip     |      |
    And the Node of "m1" runs a Pod "default/batch-0" labelled "cluster.x-k8s.io/drain=wait-completed"
    When the Machine "m1" is deleted
    Then the Pod "default/batch-0" is not evicted
    And the Machine "m1" is deleting with reason "DrainingNode" and the message:
      """
      Drain not completed yet (started at <drain start>):
      * Pod default/batch-0: waiting for completion
      """

  @seed_001 @must @MD_RULE_011
  Scenario: A Drain rule does not make the drain evict DaemonSet or mirror Pods
    Given a running Machine "m1"
    And the MachineDrainRules:
      | rule      | behavior | order |
      | drain-all | Drain    | 1     |
    And the Node of "m1" runs the Pods:
      | pod                           | owner               | annotations                                                  |
      | kube-system/node-logs-1       | DaemonSet node-logs |                                                              |
      | kube-system/kube-apiserver-m1 |                     | kubernetes.io/config.mirror=0f5d8c7bd4a1e0c3f3d8c7bd4a1e0c3f |
    When the Machine "m1" is deleted
    Then within 60 seconds the Node of "m1" is drained
    And the Pod "kube-system/node-logs-1" is not evicted
    And the Pod "kube-system/kube-apiserver-m1" is not evicted

  @seed_001 @must @MD_RULE_012
  Scenario: A rule selects Pods by their labels and their Namespace's labels
    Given a running Machine "m1"
    And the workload cluster has a Namespace "pay" labelled "team=payments"
    And the MachineDrainRules:
      | rule      | behavior | pods      | namespaces    |
      | skip-some | Skip     | app=web   | team=payments |
      | skip-some | Skip     | app=cache |               |
    And the Node of "m1" runs the Pods:
      | pod          | labels    |
      | pay/web-0    | app=web   |
      | pay/db-0     | app=db    |
      | shop/web-0   | app=web   |
      | shop/cache-0 | app=cache |
    When the Machine "m1" is deleted
    Then within 60 seconds the Node of "m1" is drained
    And the Pod "pay/web-0" is not evicted
    And the Pod "pay/db-0" is evicted
    And the Pod "shop/web-0" is evicted
    And the Pod "shop/cache-0" is not evicted
