@addon_controller
Feature: Profiles that name their clusters explicitly (clusterRefs)
  spec.clusterRefs names Clusters and SveltosClusters directly, whatever their labels. A referenced
  cluster gets the profile's add-ons as a selected one does, and its deletion is handled the same way:
  clusterDeletionBehavior for a Cluster, nothing removed and nothing held for a SveltosCluster.

  @seed_003 @must @AD_REFS_001
  Scenario: A profile naming a Cluster deploys its add-ons there whatever the Cluster's labels
    Given a ClusterClass Cluster "c1" labelled "env=dev"
    When the ClusterProfiles are created:
      | name | clusters   |
      | a    | Cluster c1 |
    Then within 10 seconds the add-ons of "a" are in the workload cluster of "c1"
    And the ClusterSummary "a-capi-c1" exists

  # Upstream appends clusterRefs unfiltered (a deleting Cluster still matches); here a deleting Cluster
  # matches no profile, so clusterDeletionBehavior applies to a referenced Cluster as to a selected one.
  @seed_003 @must @AD_REFS_002
  Scenario: Deleting a Cluster a profile names, with EnforceRemovePolicies, waits for its add-ons to leave
    Given a ClusterClass Cluster "c1" labelled "env=dev"
    And the ClusterProfiles:
      | name | clusters   | deletion              |
      | a    | Cluster c1 | EnforceRemovePolicies |
    And the add-ons of "a" are in the workload cluster of "c1"
    When the Cluster "c1" is deleted
    Then the Cluster "c1" is not marked ok to delete
    And within 60 seconds the add-ons of "a" are gone from the workload cluster of "c1"
    And within 300 seconds the Cluster "c1" is gone

  @seed_003 @must @AD_REFS_003
  Scenario: A profile naming a SveltosCluster deploys there, and leaves its add-ons when the SveltosCluster is deleted
    Given a Cluster "backing" without a ClusterClass labelled "role=backing"
    And a SveltosCluster "sc1" labelled "env=dev" for the workload cluster of "backing"
    And the ClusterProfiles:
      | name | clusters           | deletion              |
      | a    | SveltosCluster sc1 | EnforceRemovePolicies |
    And the add-ons of "a" are in the workload cluster of "backing"
    When the SveltosCluster "sc1" is deleted
    Then within 10 seconds the ClusterSummary "a-sveltos-sc1" is gone
    And the add-ons of "a" are still in the workload cluster of "backing"
