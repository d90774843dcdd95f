@apiserver
Feature: Evicting a Pod through the eviction subresource
  An eviction deletes a Pod only when no PodDisruptionBudget forbids it. The checks follow
  kube-apiserver 1.32 (reference/fake-apiserver-semantics.md §1.2): namespace admission, the Pod,
  the budgets that select it, the Pod's readiness, then the budget itself.

  Background:
    Given a Node "n1" that is Ready

  @API_EVICT_001 @must
  Scenario: An eviction in a terminating Namespace is forbidden
    Given a Namespace "shop" held in Terminating by a ConfigMap "shop/keep" with the finalizer "example.com/hold"
    When the Pod "shop/web-0" is evicted
    Then the eviction is refused with 403 "Forbidden" and the message:
      """
      pods "web-0" is forbidden: unable to create new content in namespace shop because it is being terminated
      """
    And the refusal names the cause "NamespaceTerminating" at "metadata.namespace" saying "namespace shop is being terminated"

  @API_EVICT_002 @must
  Scenario: An eviction in a Namespace that does not exist is not found
    When the Pod "ghost-town/web-0" is evicted
    Then the eviction is refused with 404 "NotFound" and the message:
      """
      namespaces "ghost-town" not found
      """

  @API_EVICT_003 @must
  Scenario: An eviction of a Pod that does not exist is not found
    When the Pod "default/ghost" is evicted
    Then the eviction is refused with 404 "NotFound" and the message:
      """
      pods "ghost" not found
      """

  @API_EVICT_004 @must
  Scenario Outline: A Pod that is <state> is evicted without consulting its budget
    Given a PodDisruptionBudget "web-pdb" with minAvailable 5 selecting "app=web"
    And a Pod "default/web-0" labelled "app=web" that is <state>
    When the Pod "default/web-0" is evicted
    Then the eviction is accepted
    And the Pod "default/web-0" <outcome>
    And the eviction did not write the PodDisruptionBudget "web-pdb"

    Examples:
      | case        | state       | outcome           |
      | pending     | Pending     | is gone           |
      | succeeded   | Succeeded   | is gone           |
      | failed      | Failed      | is gone           |
      | terminating | terminating | is terminating    |

  @API_EVICT_005 @must
  Scenario: A Pod selected by two budgets cannot be evicted
    Given 2 running Pods labelled "app=web" on Node "n1"
    And a PodDisruptionBudget "web-pdb" with minAvailable 1 selecting "app=web"
    And a PodDisruptionBudget "all-pdb" with minAvailable 1 and an empty selector
    When the Pod "default/web-0" is evicted
    Then the eviction is refused with 500 and no reason, with the message:
      """
      This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.
      """
    And the Pod "default/web-0" is running

  @API_EVICT_006 @must
  Scenario: A Pod that no budget selects is evicted and terminates gracefully
    Given a running Pod "default/web-0" on Node "n1"
    When the Pod "default/web-0" is evicted
    Then the eviction is accepted
    And the Pod "default/web-0" is terminating with a grace period of 30 seconds

  @API_EVICT_007 @must
  Scenario: A budget without a selector selects no Pod
    Given 2 running Pods labelled "app=web" on Node "n1"
    And a PodDisruptionBudget "none-pdb" with minAvailable 5 and no selector
    When the Pod "default/web-0" is evicted
    Then the eviction is accepted
    And the Pod "default/web-0" is terminating

  @API_EVICT_008 @must
  Scenario: A budget with an empty selector selects every Pod of its Namespace
    Given 2 running Pods labelled "app=web" on Node "n1"
    And a PodDisruptionBudget "all-pdb" with minAvailable 2 and an empty selector
    When the Pod "default/web-0" is evicted
    Then the eviction is refused with 429 "TooManyRequests"
    And the Pod "default/web-0" is running

  @API_EVICT_009 @must
  Scenario: An unready Pod is evicted under AlwaysAllow without spending the budget
    Given 3 running Pods labelled "app=web" on Node "n1"
    And the Pod "default/web-2" is not Ready
    And a PodDisruptionBudget "web-pdb" with minAvailable 3 selecting "app=web" and unhealthyPodEvictionPolicy AlwaysAllow
    When the Pod "default/web-2" is evicted
    Then the eviction is accepted
    And the Pod "default/web-2" is terminating
    And the eviction did not write the PodDisruptionBudget "web-pdb"

  @API_EVICT_010 @must
  Scenario: An unready Pod is evicted without spending a budget that is met
    Given 4 running Pods labelled "app=web" on Node "n1"
    And the Pod "default/web-3" is not Ready
    And a PodDisruptionBudget "web-pdb" with minAvailable 3 selecting "app=web"
    When the Pod "default/web-3" is evicted
    Then the eviction is accepted
    And the Pod "default/web-3" is terminating
    And the eviction did not write the PodDisruptionBudget "web-pdb"

  @API_EVICT_011 @must
  Scenario: An unready Pod under a budget that is not met is judged by the budget
    Given 3 running Pods labelled "app=web" on Node "n1"
    And the Pod "default/web-2" is not Ready
    And a PodDisruptionBudget "web-pdb" with minAvailable 3 selecting "app=web"
    When the Pod "default/web-2" is evicted
    Then the eviction is refused with 429 "TooManyRequests"
    And the refusal names the cause "DisruptionBudget" saying "The disruption budget web-pdb needs 3 healthy pods and has 2 currently"

  @API_EVICT_012 @must
  Scenario: A budget the disruption controller has not processed yet asks the client to retry after 10 seconds
    Given the disruption controller is switched off
    And 3 running Pods labelled "app=web" on Node "n1"
    And a PodDisruptionBudget "web-pdb" with minAvailable 1 selecting "app=web"
    When the Pod "default/web-0" is evicted
    Then the eviction is refused with 429 "TooManyRequests" and the message:
      """
      Cannot evict pod as it would violate the pod's disruption budget.
      """
    And the refusal names the cause "DisruptionBudget" saying "The disruption budget web-pdb is still being processed by the server."
    And the refusal asks to retry after 10 seconds
    And the Pod "default/web-0" is running

  @API_EVICT_012 @must
  Scenario: A budget whose change the disruption controller has not processed yet asks the client to retry
    Given 3 running Pods labelled "app=web" on Node "n1"
    And a PodDisruptionBudget "web-pdb" with minAvailable 1 selecting "app=web"
    And the disruption controller is switched off
    And the PodDisruptionBudget "web-pdb" is changed to minAvailable 2
    When the Pod "default/web-0" is evicted
    Then the eviction is refused with 429 "TooManyRequests"
    And the refusal names the cause "DisruptionBudget" saying "The disruption budget web-pdb is still being processed by the server."
    And the refusal asks to retry after 10 seconds

  @API_EVICT_013 @must
  Scenario: A budget with a negative number of allowed disruptions forbids the eviction
    Given 3 running Pods labelled "app=web" on Node "n1"
    And a PodDisruptionBudget "web-pdb" with minAvailable 1 selecting "app=web"
    And the disruption controller is switched off
    And the status of the PodDisruptionBudget "web-pdb" allows -1 disruptions
    When the Pod "default/web-0" is evicted
    Then the eviction is refused with 403 "Forbidden" and the message:
      """
      poddisruptionbudget.policy "web-pdb" is forbidden: pdb disruptions allowed is negative
      """

  @API_EVICT_014 @must
  Scenario: A budget with more than 2000 unconfirmed disruptions forbids the eviction
    Given 3 running Pods labelled "app=web" on Node "n1"
    And a PodDisruptionBudget "web-pdb" with minAvailable 1 selecting "app=web"
    And the disruption controller is switched off
    And the status of the PodDisruptionBudget "web-pdb" lists 2001 disrupted Pods
    When the Pod "default/web-0" is evicted
    Then the eviction is refused with 403 "Forbidden" and the message:
      """
      poddisruptionbudget.policy "web-pdb" is forbidden: DisruptedPods map too big - too many evictions not confirmed by PDB controller
      """

  @API_EVICT_015 @must
  Scenario: A budget that allows no disruption refuses the eviction at once, without Retry-After
    Given 3 running Pods labelled "app=web" on Node "n1"
    And a PodDisruptionBudget "web-pdb" with minAvailable 3 selecting "app=web"
    When the Pod "default/web-0" is evicted
    Then the eviction is refused with 429 "TooManyRequests" and the message:
      """
      Cannot evict pod as it would violate the pod's disruption budget.
      """
    And the refusal names the cause "DisruptionBudget" saying "The disruption budget web-pdb needs 3 healthy pods and has 3 currently"
    And the refusal does not ask to retry later
    And the Pod "default/web-0" is running

  @API_EVICT_016 @must
  Scenario: An eviction the budget allows spends one disruption and records the Pod
    Given 3 running Pods labelled "app=web" on Node "n1"
    And a PodDisruptionBudget "web-pdb" with minAvailable 2 selecting "app=web"
    And the disruption controller is switched off
    When the Pod "default/web-0" is evicted
    Then the eviction is accepted
    And the PodDisruptionBudget "web-pdb" allows 0 disruptions
    And the PodDisruptionBudget "web-pdb" records the Pod "web-0" as disrupted
    And the PodDisruptionBudget "web-pdb" has the condition "DisruptionAllowed" "False" with reason "InsufficientPods"
    And the Pod "default/web-0" is terminating

  @API_EVICT_017 @must
  Scenario: An evicted Pod is marked as a disruption target before it is deleted
    Given 3 running Pods labelled "app=web" on Node "n1"
    And a PodDisruptionBudget "web-pdb" with minAvailable 2 selecting "app=web"
    When the Pod "default/web-0" is evicted
    Then the eviction is accepted
    And the Pod "default/web-0" has the condition "DisruptionTarget" "True" with reason "EvictionByEvictionAPI" and message "Eviction API: evicting"
    And the writes to the Pod "default/web-0" were, in order:
      | write         |
      | status update |
      | deletion      |

  @API_EVICT_018 @must
  Scenario: A dry-run eviction changes nothing
    Given 3 running Pods labelled "app=web" on Node "n1"
    And a PodDisruptionBudget "web-pdb" with minAvailable 2 selecting "app=web"
    When the Pod "default/web-0" is evicted in dry-run mode
    Then the eviction is accepted
    And nothing was written
    And the Pod "default/web-0" is running
    And the PodDisruptionBudget "web-pdb" allows 1 disruption

  @API_EVICT_019 @should
  Scenario: An eviction passes its grace period on to the deletion
    Given a running Pod "default/web-0" on Node "n1"
    When the Pod "default/web-0" is evicted with a grace period of 5 seconds
    Then the eviction is accepted
    And the Pod "default/web-0" is terminating with a grace period of 5 seconds
