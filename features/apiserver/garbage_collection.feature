@apiserver
Feature: Garbage collection of dependents
  Deleting an owner propagates to the objects that name it in their ownerReferences: in the
  background (the default), in the foreground, or not at all when they are orphaned
  (reference/fake-apiserver-semantics.md §5.6).

  Background:
    Given a Node "n1" that is Ready

  @API_GC_001 @must
  Scenario: An owner deleted in the background goes at once and its dependents follow
    Given a ReplicaSet "web" with 2 replicas labelled "app=web"
    When the ReplicaSet "web" is deleted
    Then the ReplicaSet "web" is gone
    And every Pod labelled "app=web" is terminating

  @API_GC_002 @must
  Scenario: A dependent stays while one of its owners exists
    Given a ConfigMap "default/owner-a"
    And a ConfigMap "default/owner-b"
    And a ConfigMap "default/shared" owned by the ConfigMaps "default/owner-a" and "default/owner-b"
    When the ConfigMap "default/owner-a" is deleted
    Then the ConfigMap "default/shared" exists

  @API_GC_003 @must
  Scenario: An owner deleted in the foreground waits, marked, for the dependents that block it
    Given a ConfigMap "default/owner"
    And a ConfigMap "default/child" owned by the ConfigMap "default/owner" and blocking its deletion
    And the ConfigMap "default/child" has the finalizer "example.com/hold"
    When the ConfigMap "default/owner" is deleted in the foreground
    Then the ConfigMap "default/owner" is marked for deletion
    And the ConfigMap "default/owner" has the finalizer "foregroundDeletion"
    And the ConfigMap "default/child" is marked for deletion

  @API_GC_004 @must
  Scenario: An owner deleted in the foreground goes after the dependents that block it
    Given a ConfigMap "default/owner"
    And a ConfigMap "default/child-1" owned by the ConfigMap "default/owner" and blocking its deletion
    And a ConfigMap "default/child-2" owned by the ConfigMap "default/owner" and blocking its deletion
    When the ConfigMap "default/owner" is deleted in the foreground
    Then the ConfigMap "default/owner" is gone
    And the ConfigMap "default/child-1" was removed before the ConfigMap "default/owner"
    And the ConfigMap "default/child-2" was removed before the ConfigMap "default/owner"

  @API_GC_005 @must
  Scenario: An owner deleted with orphaning leaves its dependents without the owner reference
    Given a ReplicaSet "web" with 2 replicas labelled "app=web"
    When the ReplicaSet "web" is deleted leaving its dependents orphaned
    Then the ReplicaSet "web" is gone
    And the ReplicaSet "web" carried the finalizer "orphan" before it was removed
    And every Pod labelled "app=web" is running and owned by nothing

  @API_GC_006 @should
  Scenario: An owner reference to another Namespace is treated as an absent owner
    Given a Namespace "other"
    And a ConfigMap "other/owner"
    When a ConfigMap "default/child" owned by the ConfigMap "other/owner" is created
    Then the ConfigMap "default/child" is gone
