@addon_controller
Feature: Deleting a ClusterProfile
  As upstream (reference/runtime-hooks-and-addons.md §4.3, §4.5): a deleted ClusterProfile deletes its
  ClusterSummaries and goes once they are gone; each ClusterSummary withdraws or leaves the add-ons as
  stopMatchingBehavior says (clusterDeletionBehavior is about deleted clusters, not deleted profiles), and
  does not remove anything while another profile of the same cluster still depends on it.

  @seed_003 @must @AD_PDEL_001
  Scenario: Deleting a profile withdraws its add-ons and its ClusterSummaries
    Given a ClusterClass Cluster "c1" labelled "env=prod"
    And the ClusterProfiles:
      | name | clusters | deletion              |
      | a    | env=prod | EnforceRemovePolicies |
    And the add-ons of "a" are in the workload cluster of "c1"
    When the ClusterProfile "a" is deleted from the management cluster
    Then within 30 seconds the add-ons of "a" are gone from the workload cluster of "c1"
    And within 10 seconds the ClusterSummary "a-capi-c1" is gone
    And within 10 seconds the ClusterProfile "a" is gone

  @seed_003 @must @AD_PDEL_002
  Scenario: Deleting a profile with stopMatchingBehavior LeavePolicies leaves its add-ons without Sveltos's marks
    Given a ClusterClass Cluster "c1" labelled "env=prod"
    And the ClusterProfiles:
      | name | clusters | stop matching |
      | a    | env=prod | LeavePolicies |
    And the add-ons of "a" are in the workload cluster of "c1"
    When the ClusterProfile "a" is deleted from the management cluster
    Then within 10 seconds the ClusterProfile "a" is gone
    And the ClusterSummary "a-capi-c1" is gone
    And the add-ons of "a" are still in the workload cluster of "c1"
    And the add-ons of "a" in the workload cluster of "c1" carry no Sveltos marks

  @seed_003 @must @AD_PDEL_003
  Scenario: Deleting a profile another profile depends on waits for the dependent, saying so
    Given a ClusterClass Cluster "c1" labelled "env=prod"
    And the ClusterProfiles:
      | name | clusters | depends on |
      | app  | env=prod | base       |
      | base | env=prod |            |
    And the add-ons of "base, app" are in the workload cluster of "c1"
    When the ClusterProfile "base" is deleted from the management cluster
    Then within 10 seconds the ClusterSummary "base-capi-c1" is deleting with reason "WaitingForDependents" and a message containing "app-capi-c1 still depends on this profile and has not been removed yet"
    And for 60 seconds the ClusterProfile "base" stays, waiting for its ClusterSummaries
    And the add-ons of "base, app" are still in the workload cluster of "c1"

  @seed_003 @must @AD_PDEL_004
  Scenario: Once the dependent profile is deleted too, both leave, the dependent first
    Given a ClusterClass Cluster "c1" labelled "env=prod"
    And the ClusterProfiles:
      | name | clusters | depends on |
      | app  | env=prod | base       |
      | base | env=prod |            |
    And the add-ons of "base, app" are in the workload cluster of "c1"
    And the ClusterProfile "base" has been deleted from the management cluster
    When the ClusterProfile "app" is deleted from the management cluster
    Then within 30 seconds the add-ons of "app, base" are gone from the workload cluster of "c1"
    And the add-ons left the workload cluster of "c1" in the order "app, base"
    And within 10 seconds the ClusterProfile "base" is gone
    And within 10 seconds the ClusterProfile "app" is gone
