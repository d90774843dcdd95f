@apiserver @wire
Feature: Typed decoding, pruning and fieldValidation on the wire
  kube-apiserver decodes a built-in object into its Go type: a value of the wrong JSON type is
  refused with the Go decoder's message, and fields the type does not declare are dropped. The
  fieldValidation query parameter says what happens to those fields: Warn (the default) names each
  in a Warning header, Strict refuses the request, Ignore stays silent. Custom resources are pruned
  by their structural schema (reference/apiserver-for-any-client.md §3).

  @WIRE_FIELDS_001 @must
  Scenario: A value of the wrong type is a 400 BadRequest naming the Go field, and nothing is written
    When the ConfigMap "default/settings" is created over the wire from:
      """
      {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings", "labels": {"app": 5}}}
      """
    Then the answer is a Status with code 400 and reason "BadRequest"
    And the Status carries the message:
      """
      ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type string
      """
    And nothing was written

  @WIRE_FIELDS_002 @must
  Scenario: Unknown fields are pruned and each is named in a Warning header
    When the ConfigMap "default/settings" is created over the wire from:
      """
      {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings", "colour": "red"},
       "data": {"a": "b"}, "dta": {"a": "b"}}
      """
    Then the answer is the ConfigMap "default/settings" with code 201
    And the answer carries the warnings:
      """
      299 - "unknown field \"metadata.colour\""
      299 - "unknown field \"dta\""
      """
    And the ConfigMap "default/settings" is stored as:
      """
      {"metadata": {"name": "settings"}, "data": {"a": "b"}}
      """

  @WIRE_FIELDS_003 @must
  Scenario: fieldValidation=Strict refuses unknown and duplicate fields with a 400, and nothing is written
    When the ConfigMap "default/settings" is created over the wire with fieldValidation "Strict" from:
      """
      {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings", "name": "settings"},
       "dta": {"a": "b"}}
      """
    Then the answer is a Status with code 400 and reason "BadRequest"
    And the Status carries the message:
      """
      ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: unknown field "dta", duplicate field "metadata.name"
      """
    And nothing was written

  @WIRE_FIELDS_004 @must
  Scenario: fieldValidation=Ignore drops unknown fields silently
    When the ConfigMap "default/settings" is created over the wire with fieldValidation "Ignore" from:
      """
      {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings"}, "dta": {"a": "b"}}
      """
    Then the answer is the ConfigMap "default/settings" with code 201
    And the answer carries no warning
    And the ConfigMap "default/settings" is stored as:
      """
      {"metadata": {"name": "settings"}}
      """

  @WIRE_FIELDS_005 @must
  Scenario: A patch whose result has a value of the wrong type is a 422 on the patch, and nothing is written
    Given a ConfigMap "default/settings"
    When the ConfigMap "default/settings" is patched over the wire as "application/merge-patch+json":
      """
      {"data": {"replicas": 3}}
      """
    Then the answer is a Status with code 422 and reason "Invalid"
    And the Status message ends with:
      """
      json: cannot unmarshal number into Go struct field ConfigMap.data of type string
      """
    And nothing was written

  @WIRE_FIELDS_006 @must
  Scenario: A custom resource keeps only what its schema declares, and what preserves unknown fields
    Given the custom resource kind "Widget" of "example.com/v1" is served with the schema:
      """
      type: object
      properties:
        spec:
          type: object
          properties:
            size: {type: integer}
            extra: {type: object, x-kubernetes-preserve-unknown-fields: true}
      """
    When the Widget "default/w1" is created over the wire from:
      """
      {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w1"},
       "spec": {"size": 3, "colour": "red", "extra": {"anything": {"goes": true}}}, "junk": 1}
      """
    Then the answer is the Widget "default/w1" with code 201
    And the answer carries the warnings:
      """
      299 - "unknown field \"spec.colour\""
      299 - "unknown field \"junk\""
      """
    And the Widget "default/w1" is stored as:
      """
      {"metadata": {"name": "w1"}, "spec": {"size": 3, "extra": {"anything": {"goes": true}}}}
      """
