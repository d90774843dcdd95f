@apiserver
Feature: Namespace termination
  A deleted Namespace turns Terminating; the namespace controller deletes its content, then removes
  the "kubernetes" finalizer and the Namespace goes. Nothing new may be created in it meanwhile
  (reference/fake-apiserver-semantics.md §5.6, §1.2 step 3).

  Background:
    Given a Node "n1" that is Ready

  @API_NS_001 @must
  Scenario: A new Namespace is Active, carries the kubernetes finalizer and is labelled with its name
    When a Namespace "shop" is created
    Then the Namespace "shop" is in phase "Active"
    And the Namespace "shop" has the spec finalizer "kubernetes"
    And the Namespace "shop" has the label "kubernetes.io/metadata.name=shop"

  @API_NS_002 @must
  Scenario: A deleted Namespace is Terminating while content remains
    Given a Namespace "shop"
    And a ConfigMap "shop/keep" with the finalizer "example.com/hold"
    When the Namespace "shop" is deleted
    Then the Namespace "shop" is in phase "Terminating"
    And the Namespace "shop" is marked for deletion
    And the ConfigMap "shop/keep" is marked for deletion

  @API_NS_003 @should
  Scenario: A terminating Namespace says what content and which finalizers remain
    Given a Namespace "shop"
    And a ConfigMap "shop/keep" with the finalizer "example.com/hold"
    When the Namespace "shop" is deleted
    Then the Namespace "shop" has the condition "NamespaceContentRemaining" "True" with reason "SomeResourcesRemain"
    And the Namespace "shop" has the condition "NamespaceFinalizersRemaining" "True" with reason "SomeFinalizersRemain"

  @API_NS_004 @must
  Scenario: The content of a deleted Namespace is deleted before the Namespace goes
    Given a Namespace "shop"
    And a running Pod "shop/web-0" on Node "n1"
    And a ConfigMap "shop/cfg"
    When the Namespace "shop" is deleted
    Then within 60 seconds the Namespace "shop" is gone
    And the Pod "shop/web-0" was removed before the Namespace "shop"
    And the ConfigMap "shop/cfg" was removed before the Namespace "shop"

  @API_NS_005 @must
  Scenario: A Namespace held by a finalizer on its content goes once that finalizer is removed
    Given a Namespace "shop" held in Terminating by a ConfigMap "shop/keep" with the finalizer "example.com/hold"
    When the finalizer "example.com/hold" is removed from the ConfigMap "shop/keep"
    Then within 30 seconds the Namespace "shop" is gone

  @API_NS_006 @must
  Scenario: Nothing can be created in a terminating Namespace
    Given a Namespace "shop" held in Terminating by a ConfigMap "shop/keep" with the finalizer "example.com/hold"
    When a ConfigMap "shop/new" is created
    Then the write is refused with 403 "Forbidden" and the message:
      """
      configmaps "new" is forbidden: unable to create new content in namespace shop because it is being terminated
      """
    And the refusal names the cause "NamespaceTerminating" at "metadata.namespace" saying "namespace shop is being terminated"

  @API_NS_007 @must
  Scenario: Nothing can be created in a Namespace that does not exist
    When a ConfigMap "nowhere/cfg" is created
    Then the write is refused with 404 "NotFound" and the message:
      """
      namespaces "nowhere" not found
      """
