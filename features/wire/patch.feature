@apiserver @wire
Feature: Patch types on the wire
  A PATCH says how to read its body by its Content-Type: a JSON patch (RFC 6902), a JSON merge
  patch (RFC 7386), a strategic merge patch (built-in kinds only) or a server-side apply patch
  (which needs a field manager). Anything else is refused with 415
  (reference/fake-apiserver-semantics.md §5.9 and §5.4).

  Background:
    Given a ConfigMap "default/settings" labelled "app=web,tier=front"

  @WIRE_PATCH_001 @must
  Scenario: A JSON patch whose test fails is a 422 Invalid Status and changes nothing
    When the ConfigMap "default/settings" is patched over the wire as "application/json-patch+json":
      """
      [{"op": "test", "path": "/metadata/labels/app", "value": "db"},
       {"op": "remove", "path": "/metadata/labels/tier"}]
      """
    Then the answer is a Status with code 422 and reason "Invalid"
    And the Status carries the message:
      """
      the server rejected our request due to an error in our request
      """
    And the ConfigMap "default/settings" has the label "tier=front"
    And nothing was written

  @WIRE_PATCH_002 @must
  Scenario: A JSON patch whose test holds applies its operations
    When the ConfigMap "default/settings" is patched over the wire as "application/json-patch+json":
      """
      [{"op": "test", "path": "/metadata/labels/app", "value": "web"},
       {"op": "remove", "path": "/metadata/labels/tier"}]
      """
    Then the answer is the ConfigMap "default/settings" with code 200
    And the ConfigMap "default/settings" does not have the label "tier"

  @WIRE_PATCH_003 @must
  Scenario: A merge patch removes a key it sets to null and keeps the others
    When the ConfigMap "default/settings" is patched over the wire as "application/merge-patch+json":
      """
      {"metadata": {"labels": {"tier": null}}}
      """
    Then the answer is the ConfigMap "default/settings" with code 200
    And the ConfigMap "default/settings" does not have the label "tier"
    And the ConfigMap "default/settings" has the label "app=web"

  @WIRE_PATCH_004 @must
  Scenario: A strategic merge patch adds finalizers to the ones an object has, and an empty list removes none
    Given the ConfigMap "default/settings" has the finalizer "example.com/first"
    When the ConfigMap "default/settings" is patched over the wire as "application/strategic-merge-patch+json":
      """
      {"metadata": {"finalizers": ["example.com/second"]}}
      """
    And the ConfigMap "default/settings" is patched over the wire as "application/strategic-merge-patch+json":
      """
      {"metadata": {"finalizers": []}}
      """
    Then the answer is the ConfigMap "default/settings" with code 200
    And the ConfigMap "default/settings" has the finalizer "example.com/first"
    And the ConfigMap "default/settings" has the finalizer "example.com/second"

  @WIRE_PATCH_005 @must
  Scenario: A strategic merge patch to a custom resource is a 415 UnsupportedMediaType Status
    Given the custom resource kind "Widget" of "example.com/v1" is served, with a status subresource
    And a Widget "default/gear"
    When the Widget "default/gear" is patched over the wire as "application/strategic-merge-patch+json":
      """
      {"metadata": {"labels": {"app": "web"}}}
      """
    Then the answer is a Status with code 415 and reason "UnsupportedMediaType"
    And the Status carries the message:
      """
      the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml
      """

  @WIRE_PATCH_006 @must
  Scenario: A patch whose Content-Type is no patch type is a 415 UnsupportedMediaType Status
    When the ConfigMap "default/settings" is patched over the wire as "application/json":
      """
      {"metadata": {"labels": {"tier": null}}}
      """
    Then the answer is a Status with code 415 and reason "UnsupportedMediaType"
    And the Status carries the message:
      """
      the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json, application/apply-patch+yaml
      """

  @WIRE_PATCH_007 @must
  Scenario: An apply patch without a field manager is a 422 Invalid Status naming fieldManager
    When the ConfigMap "default/settings" is patched over the wire as "application/apply-patch+yaml":
      """
      {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings"}, "data": {"mode": "fast"}}
      """
    Then the answer is a Status with code 422 and reason "Invalid"
    And the refusal names the cause "FieldValueRequired" at "fieldManager" saying "Required value: is required for apply patch"
    And nothing was written

  @WIRE_PATCH_008 @must
  Scenario: Forcing a patch that is not an apply patch is a 422 Invalid Status naming force
    When the ConfigMap "default/settings" is patched over the wire as "application/merge-patch+json" with force:
      """
      {"metadata": {"labels": {"tier": null}}}
      """
    Then the answer is a Status with code 422 and reason "Invalid"
    And the refusal names the cause "FieldValueForbidden" at "force" saying "Forbidden: may not be specified for non-apply patch"
    And nothing was written

  @WIRE_PATCH_009 @should
  Scenario: An apply patch creates an object that does not exist, answered 201
    When the ConfigMap "default/applied" is patched over the wire as "application/apply-patch+yaml" by the field manager "tck":
      """
      apiVersion: v1
      kind: ConfigMap
      metadata:
        name: applied
        labels:
          app: web
      """
    Then the answer is the ConfigMap "default/applied" with code 201
    And the ConfigMap "default/applied" has the label "app=web"
