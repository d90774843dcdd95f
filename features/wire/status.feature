@apiserver @wire
Feature: Answers and errors on the wire
  Every answer is JSON served as "application/json" exactly. Every refusal is an HTTP error whose
  body is a Status carrying the same code, a reason and a message, never a web framework's own
  error body; successes answer with the object, or with a Success Status where the API says so
  (reference/fake-apiserver-semantics.md §5.4, §5.6 and §1.2).

  @WIRE_STATUS_001 @must
  Scenario: Reading an object that does not exist is a 404 NotFound Status naming it
    When the ConfigMap "default/ghost" is read over the wire
    Then the answer is a Status with code 404 and reason "NotFound"
    And the Status carries the message:
      """
      configmaps "ghost" not found
      """
    And the Status details name "ghost" of the kind "configmaps"

  @WIRE_STATUS_002 @must
  Scenario: A path the server does not serve is a 404 NotFound Status
    When a resource the server does not serve is read over the wire
    Then the answer is a Status with code 404 and reason "NotFound"
    And the Status carries the message:
      """
      the server could not find the requested resource
      """

  @WIRE_STATUS_003 @must
  Scenario: A method the addressed resource does not serve is a 405 MethodNotAllowed Status
    When the collection of ConfigMaps in "default" is replaced over the wire
    Then the answer is a Status with code 405 and reason "MethodNotAllowed"

  @WIRE_STATUS_004 @must
  Scenario: Creating an object is answered 201 with the stored object
    When a ConfigMap "default/settings" is created over the wire
    Then the answer is the ConfigMap "default/settings" with code 201

  @WIRE_STATUS_005 @must
  Scenario: Creating an object that exists is a 409 AlreadyExists Status naming it
    Given a ConfigMap "default/settings"
    When a ConfigMap "default/settings" is created over the wire
    Then the answer is a Status with code 409 and reason "AlreadyExists"
    And the Status carries the message:
      """
      configmaps "settings" already exists
      """
    And the Status details name "settings" of the kind "configmaps"

  @WIRE_STATUS_006 @must
  Scenario: An invalid object is a 422 Invalid Status whose details name its Kind and list the causes
    When a ConfigMap "default/Not_A_Name" is created over the wire
    Then the answer is a Status with code 422 and reason "Invalid"
    And the Status details name "Not_A_Name" of the kind "ConfigMap"
    And the refusal names the field "metadata.name" as "(e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"

  @WIRE_STATUS_007 @must
  Scenario: A body in a format the server does not read is a 415 UnsupportedMediaType Status
    When a ConfigMap "default/settings" is created over the wire as "text/plain"
    Then the answer is a Status with code 415 and reason "UnsupportedMediaType"
    And the Status carries the message:
      """
      the body of the request was in an unknown format - accepted media types include: application/json, application/yaml
      """

  @WIRE_STATUS_008 @must
  Scenario: Deleting a ConfigMap is answered 200 with a Success Status naming it
    Given a ConfigMap "default/settings"
    When the ConfigMap "default/settings" is deleted over the wire
    Then the answer is a Success Status with code 200
    And the Status details name "settings" of the kind "configmaps"
    And the ConfigMap "default/settings" is gone

  @WIRE_STATUS_009 @must
  Scenario: Deleting a Pod is answered 200 with the Pod, marked for deletion
    Given a Node "n1" that is Ready
    And a running Pod "default/web-0" on Node "n1"
    When the Pod "default/web-0" is deleted over the wire
    Then the answer is the Pod "default/web-0" with code 200
    And the deletion answers with the Pod "default/web-0" marked for deletion

  @WIRE_STATUS_010 @must
  Scenario: An eviction that is allowed is answered 201 with a Success Status
    Given a Node "n1" that is Ready
    And a running Pod "default/web-0" on Node "n1"
    When the Pod "default/web-0" is evicted over the wire
    Then the answer is a Success Status with code 201
    And the Pod "default/web-0" is terminating

