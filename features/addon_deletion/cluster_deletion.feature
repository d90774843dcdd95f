@addon_controller
Feature: What happens to a ClusterProfile's add-ons when a cluster is deleted
  clusterDeletionBehavior (seed 003) says what the add-on controller does with what a ClusterProfile
  deployed into a cluster once that cluster is deleted: LeavePolicies leaves it, RemovePolicies (the
  default) removes it without holding the deletion, EnforceRemovePolicies removes it and holds a Cluster
  with a managed topology at its BeforeClusterDelete hook until the removal is observed complete.

  @seed_003 @must @AD_LEAVE_001
  Scenario: LeavePolicies leaves the add-ons of a deleted ClusterClass Cluster in place
    Given a ClusterClass Cluster "c1" labelled "env=prod"
    And the ClusterProfiles:
      | name | clusters | deletion      |
      | a    | env=prod | LeavePolicies |
    And the add-ons of "a" are in the workload cluster of "c1"
    When the Cluster "c1" is deleted
    Then the Cluster "c1" is marked ok to delete
    And the add-ons of "a" are still in the workload cluster of "c1"

  @seed_003 @must @AD_REMOVE_001
  Scenario: RemovePolicies removes the add-ons of a deleted ClusterClass Cluster without holding it
    Given a ClusterClass Cluster "c1" labelled "env=prod"
    And the ClusterProfiles:
      | name | clusters | deletion       |
      | a    | env=prod | RemovePolicies |
    And the add-ons of "a" are in the workload cluster of "c1"
    When the Cluster "c1" is deleted
    Then the Cluster "c1" is marked ok to delete
    And within 60 seconds the add-ons of "a" are gone from the workload cluster of "c1"

  @seed_003 @must @AD_DEFAULT_001
  Scenario: Without a clusterDeletionBehavior the add-ons are removed as with RemovePolicies
    Given a ClusterClass Cluster "c1" labelled "env=prod"
    And the ClusterProfiles:
      | name | clusters |
      | a    | env=prod |
    And the add-ons of "a" are in the workload cluster of "c1"
    When the Cluster "c1" is deleted
    Then the Cluster "c1" is marked ok to delete
    And within 60 seconds the add-ons of "a" are gone from the workload cluster of "c1"

  @seed_003 @must @AD_ENFORCE_001
  Scenario: EnforceRemovePolicies removes the add-ons while the Cluster waits for them
    Given a ClusterClass Cluster "c1" labelled "env=prod"
    And the ClusterProfiles:
      | name | clusters | deletion              |
      | a    | env=prod | EnforceRemovePolicies |
    And the add-ons of "a" are in the workload cluster of "c1"
    When the Cluster "c1" is deleted
    Then the Cluster "c1" is not marked ok to delete
    And within 60 seconds the add-ons of "a" are gone from the workload cluster of "c1"
    And within 300 seconds the Cluster "c1" is gone

  @seed_003 @must @AD_ENFORCE_002
  Scenario: EnforceRemovePolicies holds the Cluster while its workload cluster cannot be reached, and says why
    Given a ClusterClass Cluster "c1" labelled "env=prod"
    And the ClusterProfiles:
      | name | clusters | deletion              |
      | a    | env=prod | EnforceRemovePolicies |
    And the add-ons of "a" are in the workload cluster of "c1"
    And the workload cluster of "c1" has become unreachable
    When the Cluster "c1" is deleted
    Then for 120 seconds the Cluster "c1" stays, not marked ok to delete
    And within 10 seconds the ClusterSummary "a-capi-c1" is deleting with reason "RemovalFailed" and a message containing "is not reachable"

  @seed_003 @must @AD_ENFORCE_003
  Scenario: A held Cluster is released once its workload cluster answers again and the cleanup completes
    Given a ClusterClass Cluster "c1" labelled "env=prod"
    And the ClusterProfiles:
      | name | clusters | deletion              |
      | a    | env=prod | EnforceRemovePolicies |
    And the add-ons of "a" are in the workload cluster of "c1"
    And the workload cluster of "c1" has become unreachable
    And the Cluster "c1" has been deleted
    When the workload cluster of "c1" becomes reachable again
    Then within 300 seconds the Cluster "c1" is gone

  # The controller writes its ExtensionConfig with a url, not the seed's Service (the world has no
  # cluster network), and selects every namespace.
  @seed_003 @must @AD_ENFORCE_004
  Scenario: The add-on controller serves BeforeClusterDelete over HTTPS, asking to retry while it removes
    Given a ClusterClass Cluster "c1" labelled "env=prod"
    And the ClusterProfiles:
      | name | clusters | deletion              |
      | a    | env=prod | EnforceRemovePolicies |
    And the add-ons of "a" are in the workload cluster of "c1"
    And the workload cluster of "c1" has become unreachable
    When the Cluster "c1" is deleted
    Then the ExtensionConfig "sveltos-cleanup-gate" lists the handlers "before-cluster-delete.sveltos-cleanup-gate"
    And the add-on controller answers BeforeClusterDelete for "c1" with "Success", retryAfterSeconds 10 and a message containing "a-capi-c1: cluster default/c1 is not reachable"

  @seed_003 @must @AD_ENFORCE_004
  Scenario: The add-on controller stops asking to retry once the removal is complete
    Given a ClusterClass Cluster "c1" labelled "env=prod"
    And the ClusterProfiles:
      | name | clusters | deletion              |
      | a    | env=prod | EnforceRemovePolicies |
    And the add-ons of "a" are in the workload cluster of "c1"
    And the workload cluster of "c1" has become unreachable
    And the Cluster "c1" has been deleted
    When the workload cluster of "c1" becomes reachable again
    Then within 60 seconds the add-on controller answers BeforeClusterDelete for "c1" with "Success" and no retryAfterSeconds

  @seed_003 @must @AD_REMOVE_002
  Scenario: RemovePolicies gives up on an unreachable workload cluster without holding the Cluster
    Given a ClusterClass Cluster "c1" labelled "env=prod"
    And the ClusterProfiles:
      | name | clusters | deletion       |
      | a    | env=prod | RemovePolicies |
    And the add-ons of "a" are in the workload cluster of "c1"
    And the workload cluster of "c1" has become unreachable
    When the Cluster "c1" is deleted
    Then the Cluster "c1" is marked ok to delete
    And within 300 seconds the Cluster "c1" is gone
    And within 10 seconds the ClusterSummary "a-capi-c1" is gone

  # Seed 003 (Notes): the hook is only called for Clusters created with a ClusterClass; without one,
  # EnforceRemovePolicies removes the add-ons as RemovePolicies does and holds nothing.
  @seed_003 @must @AD_NOCLASS_001
  Scenario Outline: A Cluster without a ClusterClass is never held, whatever the behaviour (<behaviour>)
    Given a Cluster "c1" without a ClusterClass labelled "env=prod"
    And the ClusterProfiles:
      | name | clusters | deletion    |
      | a    | env=prod | <behaviour> |
    And the add-ons of "a" are in the workload cluster of "c1"
    When the Cluster "c1" is deleted
    Then within 300 seconds the Cluster "c1" is gone

    Examples:
      | behaviour             |
      | LeavePolicies         |
      | RemovePolicies        |
      | EnforceRemovePolicies |

  @seed_003 @must @AD_NOCLASS_002
  Scenario: EnforceRemovePolicies removes the add-ons of a Cluster without a ClusterClass while it is taken apart
    Given a Cluster "c1" without a ClusterClass labelled "env=prod"
    And the ClusterProfiles:
      | name | clusters | deletion              |
      | a    | env=prod | EnforceRemovePolicies |
    And the add-ons of "a" are in the workload cluster of "c1"
    When the Cluster "c1" is deleted
    Then within 60 seconds the add-ons of "a" are gone from the workload cluster of "c1"

  # Seed 003 (Notes): without a ClusterClass nothing gates the deletion, so the Cluster may be gone while
  # a removal is still under way; upstream's ClusterSummary then lets go (reference §4.2 step 4: a Cluster
  # that is not present -> handleDeletedCluster, finalizer removed).
  @seed_003 @must @AD_NOCLASS_003
  Scenario Outline: A Cluster without a ClusterClass goes while its add-ons cannot be removed, and its ClusterSummary follows (<behaviour>)
    Given a Cluster "c1" without a ClusterClass labelled "env=prod"
    And the ClusterProfiles:
      | name | clusters | deletion    |
      | a    | env=prod | <behaviour> |
    And the add-ons of "a" are in the workload cluster of "c1"
    And the workload cluster of "c1" has become unreachable
    When the Cluster "c1" is deleted
    Then within 300 seconds the Cluster "c1" is gone
    And within 30 seconds the ClusterSummary "a-capi-c1" is gone

    Examples:
      | behaviour             |
      | RemovePolicies        |
      | EnforceRemovePolicies |

  # Seed 003 sets clusterDeletionBehavior per ClusterProfile ("what should Sveltos do with resources
  # deployed by this ClusterProfile?"); a Cluster matched by several profiles gets each one's behaviour.
  @seed_003 @must @AD_MIXED_001
  Scenario: Each ClusterProfile of a deleted Cluster treats its own add-ons as its clusterDeletionBehavior says
    Given a ClusterClass Cluster "c1" labelled "env=prod"
    And the ClusterProfiles:
      | name | clusters | deletion              |
      | keep | env=prod | LeavePolicies         |
      | drop | env=prod | RemovePolicies        |
      | gate | env=prod | EnforceRemovePolicies |
    And the add-ons of "keep, drop, gate" are in the workload cluster of "c1"
    When the Cluster "c1" is deleted
    Then within 60 seconds the add-ons of "drop, gate" are gone from the workload cluster of "c1"
    And the add-ons of "keep" are still in the workload cluster of "c1"
    And within 300 seconds the Cluster "c1" is gone

  @seed_003 @must @AD_MIXED_002
  Scenario: One EnforceRemovePolicies profile holds the Cluster that its other profiles would let go, and only its removal is waited for
    Given a ClusterClass Cluster "c1" labelled "env=prod"
    And the ClusterProfiles:
      | name | clusters | deletion              |
      | keep | env=prod | LeavePolicies         |
      | drop | env=prod | RemovePolicies        |
      | gate | env=prod | EnforceRemovePolicies |
    And the add-ons of "keep, drop, gate" are in the workload cluster of "c1"
    And the workload cluster of "c1" has become unreachable
    When the Cluster "c1" is deleted
    Then for 120 seconds the Cluster "c1" stays, not marked ok to delete
    And the ClusterSummary "keep-capi-c1" is gone
    And the add-on controller answers BeforeClusterDelete for "c1" with "Success", retryAfterSeconds 10 and a message naming only "gate-capi-c1"

  # Seed 003 (SveltosCluster case): deleting a SveltosCluster only means Sveltos stops managing the
  # cluster, so nothing is removed from it and nothing waits, whatever clusterDeletionBehavior says.
  @seed_003 @must @AD_SVELTOS_001
  Scenario Outline: Deleting a SveltosCluster leaves its add-ons and holds nothing (<behaviour>)
    Given a Cluster "backing" without a ClusterClass labelled "role=backing"
    And a SveltosCluster "sc1" labelled "env=prod" for the workload cluster of "backing"
    And the ClusterProfiles:
      | name | clusters | deletion    |
      | a    | env=prod | <behaviour> |
    And the add-ons of "a" are in the workload cluster of "backing"
    When the SveltosCluster "sc1" is deleted
    Then within 10 seconds the SveltosCluster "sc1" is gone
    And within 10 seconds the ClusterSummary "a-sveltos-sc1" is gone
    And the add-ons of "a" are still in the workload cluster of "backing"

    Examples:
      | behaviour             |
      | LeavePolicies         |
      | RemovePolicies        |
      | EnforceRemovePolicies |
