@machine_controller
Feature: Evictions that fail, and how the drain reports and retries them
  An eviction can fail (seed 001 "Node drain"): it would violate a PodDisruptionBudget
  (drain_pdb.feature), the Pod's Namespace is terminating (the namespace controller of
  kube-controller-manager then deletes the Pod), or another error. The drain never deletes a Pod
  itself; it reports each failure in its condition message and tries again 20 seconds later.

  Background:
    Given a Cluster "c1" whose control plane Machine "cp-0" is running

  @seed_001 @must @MD_EVICT_001
  Scenario: A Pod in a terminating Namespace is not evicted and the drain says why
    Given a running Machine "m1"
    And the Node of "m1" runs a Pod "shop/cart-0"
    And the namespace controller is switched off
    And the Namespace "shop" of the workload cluster is being deleted
    When the Machine "m1" is deleted
    Then the Pod "shop/cart-0" is not evicted
    And the Pod "shop/cart-0" is still running
    And the Machine "m1" is deleting with reason "DrainingNode" and the message:
      """
      Drain not completed yet (started at <drain start>):
      * Pod shop/cart-0: failed to evict Pod, Cannot evict pod from terminating namespace: unable to create eviction (kube-controller-manager should set deletionTimestamp)
      """

  @seed_001 @must @MD_EVICT_002
  Scenario: The drain completes once the namespace controller has deleted the terminating Namespace's Pods
    Given a running Machine "m1"
    And the Node of "m1" runs a Pod "shop/cart-0"
    And the namespace controller is switched off
    And the Namespace "shop" of the workload cluster is being deleted
    And the Machine "m1" has been deleted
    When the namespace controller is switched on again
    Then within 60 seconds the Pod "shop/cart-0" is gone from the workload cluster
    And within 20 seconds the Node of "m1" is drained
    And the Pod "shop/cart-0" is not evicted

  @seed_001 @must @MD_EVICT_003
  Scenario: Another eviction error is reported as it is
    Given a running Machine "m1"
    And the Node of "m1" runs a Pod "default/web-0" labelled "app=web"
    And the workload cluster has a PodDisruptionBudget "default/web-pdb" with minAvailable 0 selecting "app=web"
    And the workload cluster has a PodDisruptionBudget "default/all-pdb" with minAvailable 0 selecting "app=web"
    When the Machine "m1" is deleted
    Then the Pod "default/web-0" is not evicted
    And the Machine "m1" is deleting with reason "DrainingNode" and the message:
      """
      Drain not completed yet (started at <drain start>):
      * Pod default/web-0: failed to evict Pod, This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.
      """

  @seed_001 @must @MD_EVICT_003
  Scenario: A failed eviction is tried again at the next pass
    Given a running Machine "m1"
    And the Node of "m1" runs a Pod "default/web-0" labelled "app=web"
    And the workload cluster has a PodDisruptionBudget "default/web-pdb" with minAvailable 0 selecting "app=web"
    And the workload cluster has a PodDisruptionBudget "default/all-pdb" with minAvailable 0 selecting "app=web"
    And the Machine "m1" has been deleted
    When the PodDisruptionBudget "default/all-pdb" of the workload cluster is deleted
    Then within 20 seconds the Pod "default/web-0" is evicted
