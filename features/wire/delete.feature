@apiserver @wire
Feature: DELETE answers on the wire
  What a DELETE answers depends on the resource's registry: pods, services, namespaces, service
  accounts, persistent volumes and claims, and the storage kinds answer with the deleted object;
  every other resource, custom resources included, answers with a Success Status naming the object
  by its plural resource. An object its finalizers hold answers 200 with the object, marked for
  deletion (reference/apiserver-for-any-client.md §2).

  @WIRE_DELETE_001 @must
  Scenario: Deleting a ServiceAccount answers with the ServiceAccount itself
    Given a ServiceAccount "default/robot"
    When the ServiceAccount "default/robot" is deleted over the wire
    Then the answer is the ServiceAccount "default/robot" with code 200
    And the ServiceAccount "default/robot" is gone

  @WIRE_DELETE_002 @must
  Scenario: Deleting a custom resource answers with a Success Status naming its plural resource
    Given the custom resource kind "Widget" of "example.com/v1" is served, with a status subresource
    And a Widget "default/gear"
    When the Widget "default/gear" is deleted over the wire
    Then the answer is a Success Status with code 200
    And the Status details name "gear" of the kind "widgets"
    And the Widget "default/gear" is gone

  @WIRE_DELETE_003 @must
  Scenario: Deleting an object its finalizer holds answers 200 with the object, marked for deletion
    Given a ConfigMap "default/held" with the finalizer "example.com/hold"
    When the ConfigMap "default/held" is deleted over the wire
    Then the answer is the ConfigMap "default/held" with code 200
    And the ConfigMap "default/held" is marked for deletion
