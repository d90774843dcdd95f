@addon_controller
Feature: Add-ons leave a deleted cluster in reverse dependency order
  When a depends on b, a's add-ons are removed before b's (seed 003's example; upstream v1.14
  areDependentsRemoved), over any DAG of ClusterProfiles; a cycle is reported and does not deadlock the
  deletion; a dependency that does not exist makes the dependent wait, saying so.

  # Seed 003 says "reverse dependency order (delete dependents last)" but its own example and upstream
  # remove the dependent first (reference/runtime-hooks-and-addons.md §4.5; DESIGN.md); we follow the example.
  @seed_003 @must @AD_ORDER_001
  Scenario: A chain of four profiles is removed from the last dependent to the first prerequisite
    Given a ClusterClass Cluster "c1" labelled "env=prod"
    And the ClusterProfiles:
      | name | clusters | deletion              | depends on |
      | d    | env=prod | EnforceRemovePolicies | c          |
      | c    | env=prod | EnforceRemovePolicies | b          |
      | b    | env=prod | EnforceRemovePolicies | a          |
      | a    | env=prod | EnforceRemovePolicies |            |
    And the add-ons of "a, b, c, d" are in the workload cluster of "c1"
    When the Cluster "c1" is deleted
    Then within 60 seconds the add-ons of "a, b, c, d" are gone from the workload cluster of "c1"
    And the add-ons left the workload cluster of "c1" in the order "d, c, b, a"
    And within 300 seconds the Cluster "c1" is gone

  @seed_003 @must @AD_ORDER_002
  Scenario: In a diamond of five profiles every add-on leaves after those of the profiles depending on it
    Given a ClusterClass Cluster "c1" labelled "env=prod"
    And the ClusterProfiles:
      | name   | clusters | deletion       | depends on    |
      | top    | env=prod | RemovePolicies | left, right   |
      | left   | env=prod | RemovePolicies | base          |
      | right  | env=prod | RemovePolicies | base          |
      | base   | env=prod | RemovePolicies | core          |
      | core   | env=prod | RemovePolicies |               |
    And the add-ons of "top, left, right, base, core" are in the workload cluster of "c1"
    When the Cluster "c1" is deleted
    Then within 60 seconds the add-ons of "top, left, right, base, core" are gone from the workload cluster of "c1"
    And each add-on left the workload cluster of "c1" only after the add-ons of the ClusterProfiles depending on it

  @seed_003 @must @AD_ORDER_003
  Scenario: A prerequisite waits for its dependents, saying which one it waits for
    Given a ClusterClass Cluster "c1" labelled "env=prod"
    And the ClusterProfiles:
      | name | clusters | deletion              | depends on |
      | app  | env=prod | EnforceRemovePolicies | base       |
      | base | env=prod | EnforceRemovePolicies |            |
    And the add-ons of "app, base" are in the workload cluster of "c1"
    And the workload cluster of "c1" has become unreachable
    When the Cluster "c1" is deleted
    Then within 10 seconds the ClusterSummary "base-capi-c1" is deleting with reason "WaitingForDependents" and a message containing "app-capi-c1 still depends on this profile and has not been removed yet"

  # Upstream has no cycle detection (a cycle waits forever); DESIGN.md: a cycle is reported in status and
  # does not deadlock deletion.
  @seed_003 @must @AD_CYCLE_001
  Scenario: A dependency cycle is reported in the status of the profiles in it
    Given a ClusterClass Cluster "c1" labelled "env=prod"
    And the ClusterProfiles:
      | name | clusters | deletion              | depends on |
      | x    | env=prod | EnforceRemovePolicies | y          |
    When a ClusterProfile "y" with dependsOn "x" is created
    Then within 10 seconds the ClusterSummary "x-capi-c1" reports the dependencies "dependency cycle among ClusterProfiles x, y"

  # As AD_CYCLE_001: DESIGN.md, not upstream.
  @seed_003 @must @AD_CYCLE_002
  Scenario: A dependency cycle does not deadlock the deletion of the Cluster
    Given a ClusterClass Cluster "c1" labelled "env=prod"
    And the ClusterProfiles:
      | name | clusters | deletion              | depends on |
      | x    | env=prod | EnforceRemovePolicies | y          |
      | y    | env=prod | EnforceRemovePolicies | x          |
      | z    | env=prod | EnforceRemovePolicies |            |
    And the add-ons of "z" are in the workload cluster of "c1"
    When the Cluster "c1" is deleted
    Then within 300 seconds the Cluster "c1" is gone

  @seed_003 @must @AD_MISSING_001
  Scenario: A profile whose dependency does not exist waits, saying so
    Given a ClusterClass Cluster "c1" labelled "env=prod"
    When a ClusterProfile "app" with dependsOn "base" is created
    Then within 10 seconds the ClusterSummary "app-capi-c1" reports the dependencies "ClusterProfile base is a dependency. The ClusterSummary instance for this profile/cluster was not found"

  @seed_003 @must @AD_MISSING_002
  Scenario: A Cluster whose profile waits for a missing dependency is not held by it
    Given a ClusterClass Cluster "c1" labelled "env=prod"
    And the ClusterProfiles:
      | name | clusters | deletion              | depends on |
      | app  | env=prod | EnforceRemovePolicies | base       |
    When the Cluster "c1" is deleted
    Then within 300 seconds the Cluster "c1" is gone
