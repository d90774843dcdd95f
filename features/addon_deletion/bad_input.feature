@addon_controller
Feature: Bad input to the add-on controller is reported, never deployed half-way, and never holds a deletion
  Unknown enum values are refused at admission with the field and the supported values. A dependency that
  does not exist, a policyRef to a ConfigMap that does not exist and a manifest that does not parse are
  reported in the ClusterSummary's status with upstream's values and texts; nothing of such a profile is
  deployed, fixing the input recovers, and the deletion of the Cluster is never held by it.

  # Seed 003's examples write stopMatchingBehavior: RemovePolicies, which upstream's enum does not have
  # (reference/runtime-hooks-and-addons.md §4.7): as written, they are refused.
  @seed_003 @must @AD_VALID_003
  Scenario Outline: The seed's example ClusterProfile "<name>" is refused for its stopMatchingBehavior only
    When the example ClusterProfile "<name>" of seed 003 is created
    Then the write is refused with 422 "Invalid" and the message:
      """
      ClusterProfile.config.projectsveltos.io "<name>" is invalid: spec.stopMatchingBehavior: Unsupported value: "RemovePolicies": supported values: "WithdrawPolicies", "LeavePolicies"
      """
    And the refusal names only the cause "FieldValueNotSupported" at "spec.stopMatchingBehavior"

    Examples:
      | name              |
      | cleanup-on-delete |
      | strict-cleanup    |

  @seed_003 @must @AD_VALID_004
  Scenario Outline: An update to an unknown <field> is refused as a create is
    Given the ClusterProfiles:
      | name | clusters |
      | p    | env=prod |
    When the ClusterProfile "p" is updated with <field> "<value>"
    Then the write is refused with 422 "Invalid" and the message:
      """
      ClusterProfile.config.projectsveltos.io "p" is invalid: spec.<field>: Unsupported value: "<value>": supported values: <supported>
      """

    Examples:
      | field                   | value          | supported                                                   |
      | clusterDeletionBehavior | Orphan         | "LeavePolicies", "RemovePolicies", "EnforceRemovePolicies" |
      | stopMatchingBehavior    | RemovePolicies | "WithdrawPolicies", "LeavePolicies"                         |

  @seed_003 @must @AD_MISSING_003
  Scenario: A profile waiting for a missing dependency is deployed once that dependency is created
    Given a ClusterClass Cluster "c1" labelled "env=prod"
    And the ClusterProfiles:
      | name | clusters | depends on |
      | app  | env=prod | base       |
    When a ClusterProfile "base" with clusterDeletionBehavior "RemovePolicies" is created
    Then within 30 seconds the add-ons of "base, app" are in the workload cluster of "c1"
    And within 10 seconds the ClusterSummary "app-capi-c1" reports the dependencies "All dependencies deployed"

  # Upstream reports a missing reference as FailedNonRetriable (a NonRetriableError), not Failed.
  @seed_003 @must @AD_BADREF_001
  Scenario: A policyRef to a ConfigMap that does not exist deploys nothing and is reported
    Given a ClusterClass Cluster "c1" labelled "env=prod"
    When the ClusterProfiles are created:
      | name | clusters | manifests |
      | a    | env=prod | missing   |
    Then the ClusterSummary "a-capi-c1" has the feature status "FailedNonRetriable" with a failure message containing "Referenced resource: ConfigMap default/a-manifests does not exist"
    And a Warning event "FailedNonRetriable" is recorded for the ClusterSummary "a-capi-c1"
    And nothing of "a" is in the workload cluster of "c1"

  @seed_003 @must @AD_BADREF_002
  Scenario: Creating the missing ConfigMap deploys the add-ons
    Given a ClusterClass Cluster "c1" labelled "env=prod"
    And the ClusterProfiles:
      | name | clusters | manifests |
      | a    | env=prod | missing   |
    When the manifests of "a" are fixed
    Then within 10 seconds the add-ons of "a" are in the workload cluster of "c1"
    And within 10 seconds the ClusterSummary "a-capi-c1" has the feature status "Provisioned" and no failure message

  @seed_003 @must @AD_BADMANIFEST_001
  Scenario: A manifest that does not parse deploys nothing and is reported
    Given a ClusterClass Cluster "c1" labelled "env=prod"
    When the ClusterProfiles are created:
      | name | clusters | manifests  |
      | a    | env=prod | unparsable |
    Then the ClusterSummary "a-capi-c1" has the feature status "Failed" with a failure message starting "failed to get policy from Data apiVersion: v1"
    And nothing of "a" is in the workload cluster of "c1"

  # The whole profile is parsed before anything is deployed (upstream deploys ConfigMap by ConfigMap,
  # each parsed whole first): a profile is never deployed half-way.
  @seed_003 @must @AD_BADMANIFEST_002
  Scenario: A ConfigMap with two manifests of which one does not parse deploys neither
    Given a ClusterClass Cluster "c1" labelled "env=prod"
    When the ClusterProfiles are created:
      | name | clusters | manifests             |
      | a    | env=prod | one of two unparsable |
    Then the ClusterSummary "a-capi-c1" has the feature status "Failed" with a failure message containing "name: a-addon-2"
    And nothing of "a" is in the workload cluster of "c1"

  @seed_003 @must @AD_BADMANIFEST_002
  Scenario: Fixing the ConfigMap of two manifests deploys both
    Given a ClusterClass Cluster "c1" labelled "env=prod"
    And the ClusterProfiles:
      | name | clusters | manifests             |
      | a    | env=prod | one of two unparsable |
    When the manifests of "a" are fixed
    Then within 10 seconds the workload cluster of "c1" holds the ConfigMaps "a-addon, a-addon-2"
    And within 10 seconds the ClusterSummary "a-capi-c1" has the feature status "Provisioned" and no failure message

  @seed_003 @must @AD_BADDELETE_001
  Scenario Outline: A profile that failed to deploy (<manifests>) does not hold the deletion of its Cluster (<behaviour>)
    Given a ClusterClass Cluster "c1" labelled "env=prod"
    And the ClusterProfiles:
      | name | clusters | deletion    | manifests   |
      | a    | env=prod | <behaviour> | <manifests> |
    When the Cluster "c1" is deleted
    Then within 300 seconds the Cluster "c1" is gone
    And within 10 seconds the ClusterSummary "a-capi-c1" is gone

    Examples:
      | behaviour             | manifests  |
      | EnforceRemovePolicies | missing    |
      | EnforceRemovePolicies | unparsable |
      | RemovePolicies        | missing    |
      | RemovePolicies        | unparsable |

  @seed_003 @must @AD_BADDELETE_002
  Scenario: EnforceRemovePolicies removes what was deployed even after the manifests stopped parsing
    Given a ClusterClass Cluster "c1" labelled "env=prod"
    And the ClusterProfiles:
      | name | clusters | deletion              |
      | a    | env=prod | EnforceRemovePolicies |
    And the add-ons of "a" are in the workload cluster of "c1"
    And the manifests of "a" have been broken
    When the Cluster "c1" is deleted
    Then the Cluster "c1" is not marked ok to delete
    And within 60 seconds the add-ons of "a" are gone from the workload cluster of "c1"
    And within 300 seconds the Cluster "c1" is gone
