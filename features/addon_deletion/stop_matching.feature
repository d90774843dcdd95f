@addon_controller
Feature: stopMatchingBehavior and the validation of ClusterProfiles
  When a cluster stops matching a profile (it is not being deleted), stopMatchingBehavior decides, as
  upstream: WithdrawPolicies (the default) removes the add-ons, LeavePolicies leaves them without
  Sveltos's marks. clusterDeletionBehavior does not apply then.

  @seed_003 @must @AD_STOP_001
  Scenario: A cluster that stops matching loses the add-ons with WithdrawPolicies, whatever clusterDeletionBehavior says
    Given a ClusterClass Cluster "c1" labelled "env=prod"
    And the ClusterProfiles:
      | name | clusters | deletion      | stop matching    |
      | a    | env=prod | LeavePolicies | WithdrawPolicies |
    And the add-ons of "a" are in the workload cluster of "c1"
    When the Cluster "c1" is relabelled "env=dev"
    Then within 10 seconds the add-ons of "a" are gone from the workload cluster of "c1"

  @seed_003 @must @AD_STOP_002
  Scenario: A cluster that stops matching keeps the add-ons with LeavePolicies, whatever clusterDeletionBehavior says
    Given a ClusterClass Cluster "c1" labelled "env=prod"
    And the ClusterProfiles:
      | name | clusters | deletion              | stop matching |
      | a    | env=prod | EnforceRemovePolicies | LeavePolicies |
    And the add-ons of "a" are in the workload cluster of "c1"
    When the Cluster "c1" is relabelled "env=dev"
    Then within 10 seconds the ClusterSummary "a-capi-c1" is gone
    And the add-ons of "a" are still in the workload cluster of "c1"

  # Seed 003's examples write stopMatchingBehavior: RemovePolicies; upstream's enum has only
  # WithdrawPolicies and LeavePolicies (reference/runtime-hooks-and-addons.md §4.7), and so do we.
  @seed_003 @must @AD_VALID_001
  Scenario: stopMatchingBehavior RemovePolicies is refused, naming the two supported values
    When a ClusterProfile "p" with stopMatchingBehavior "RemovePolicies" is created
    Then the write is refused with 422 "Invalid" and the message:
      """
      ClusterProfile.config.projectsveltos.io "p" is invalid: spec.stopMatchingBehavior: Unsupported value: "RemovePolicies": supported values: "WithdrawPolicies", "LeavePolicies"
      """

  @seed_003 @must @AD_VALID_002
  Scenario: An unknown clusterDeletionBehavior is refused, naming the three supported values
    When a ClusterProfile "p" with clusterDeletionBehavior "Orphan" is created
    Then the write is refused with 422 "Invalid" and the message:
      """
      ClusterProfile.config.projectsveltos.io "p" is invalid: spec.clusterDeletionBehavior: Unsupported value: "Orphan": supported values: "LeavePolicies", "RemovePolicies", "EnforceRemovePolicies"
      """
