@apiserver @wire
Feature: Server-side apply and field ownership on the wire
  Every write records who owns which field in metadata.managedFields: an apply patch as an "Apply"
  entry owning exactly what it applied, any other write as an "Update" entry owning what it changed.
  An apply that would change a field another manager owns is refused with 409 Conflict unless
  forced; applying the same value shares the field; a field an applier stops applying is removed
  when nobody else owns it (reference/apiserver-for-any-client.md §5).

  Background:
    Given a ConfigMap "default/settings" labelled "app=web"

  @WIRE_APPLY_001 @must
  Scenario: An apply records an Apply entry owning exactly the applied fields
    When the ConfigMap "default/settings" is patched over the wire as "application/apply-patch+yaml" by the field manager "deployer":
      """
      {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings", "labels": {"tier": "front"}}}
      """
    Then the answer is the ConfigMap "default/settings" with code 200
    And the ConfigMap "default/settings" is managed by "deployer" with the operation "Apply" owning:
      """
      {"f:metadata": {"f:labels": {"f:tier": {}}}}
      """

  @WIRE_APPLY_002 @must
  Scenario: An apply that changes a field another manager applied is a 409 Conflict naming the manager and the field
    Given the ConfigMap "default/settings" was patched over the wire as "application/apply-patch+yaml" by the field manager "deployer":
      """
      {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings", "labels": {"tier": "front"}}}
      """
    When the ConfigMap "default/settings" is patched over the wire as "application/apply-patch+yaml" by the field manager "autoscaler":
      """
      {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings", "labels": {"tier": "back"}}}
      """
    Then the answer is a Status with code 409 and reason "Conflict"
    And the Status carries the message:
      """
      Apply failed with 1 conflict: conflict with "deployer": .metadata.labels.tier
      """
    And the ConfigMap "default/settings" has the label "tier=front"
    And nothing was written

  @WIRE_APPLY_003 @must
  Scenario: A forced apply takes the conflicting field from the other manager
    Given the ConfigMap "default/settings" was patched over the wire as "application/apply-patch+yaml" by the field manager "deployer":
      """
      {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings", "labels": {"tier": "front"}}}
      """
    When the ConfigMap "default/settings" is patched over the wire as "application/apply-patch+yaml" by the field manager "autoscaler" with force:
      """
      {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings", "labels": {"tier": "back"}}}
      """
    Then the answer is the ConfigMap "default/settings" with code 200
    And the ConfigMap "default/settings" has the label "tier=back"
    And the ConfigMap "default/settings" is managed by "autoscaler" with the operation "Apply" owning:
      """
      {"f:metadata": {"f:labels": {"f:tier": {}}}}
      """
    And the ConfigMap "default/settings" is not managed by "deployer"

  @WIRE_APPLY_004 @must
  Scenario: Applying the value a field already has shares it without a conflict
    Given the ConfigMap "default/settings" was patched over the wire as "application/apply-patch+yaml" by the field manager "deployer":
      """
      {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings", "labels": {"tier": "front"}}}
      """
    When the ConfigMap "default/settings" is patched over the wire as "application/apply-patch+yaml" by the field manager "autoscaler":
      """
      {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings", "labels": {"tier": "front"}}}
      """
    Then the answer is the ConfigMap "default/settings" with code 200
    And the ConfigMap "default/settings" is managed by "deployer" with the operation "Apply" owning:
      """
      {"f:metadata": {"f:labels": {"f:tier": {}}}}
      """
    And the ConfigMap "default/settings" is managed by "autoscaler" with the operation "Apply" owning:
      """
      {"f:metadata": {"f:labels": {"f:tier": {}}}}
      """

  @WIRE_APPLY_005 @must
  Scenario: A field the applier stops applying is removed unless another manager owns it
    Given the ConfigMap "default/settings" was patched over the wire as "application/apply-patch+yaml" by the field manager "deployer":
      """
      {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings", "labels": {"tier": "front", "zone": "a"}}}
      """
    And the ConfigMap "default/settings" was patched over the wire as "application/apply-patch+yaml" by the field manager "labeller":
      """
      {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings", "labels": {"zone": "a"}}}
      """
    When the ConfigMap "default/settings" is patched over the wire as "application/apply-patch+yaml" by the field manager "deployer":
      """
      {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings"}}
      """
    Then the answer is the ConfigMap "default/settings" with code 200
    And the ConfigMap "default/settings" does not have the label "tier"
    And the ConfigMap "default/settings" has the label "zone=a"
    And the ConfigMap "default/settings" has the label "app=web"

  @WIRE_APPLY_006 @must
  Scenario: A non-apply write takes ownership of what it changes without a conflict, and the applier then conflicts with it
    Given the ConfigMap "default/settings" was patched over the wire as "application/apply-patch+yaml" by the field manager "deployer":
      """
      {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings", "labels": {"tier": "front"}}}
      """
    And the ConfigMap "default/settings" was patched over the wire as "application/merge-patch+json" by the field manager "editor":
      """
      {"metadata": {"labels": {"tier": "edited"}}}
      """
    When the ConfigMap "default/settings" is patched over the wire as "application/apply-patch+yaml" by the field manager "deployer":
      """
      {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings", "labels": {"tier": "front"}}}
      """
    Then the answer is a Status with code 409 and reason "Conflict"
    And the Status carries the message:
      """
      Apply failed with 1 conflict: conflict with "editor" using v1: .metadata.labels.tier
      """
    And the ConfigMap "default/settings" has the label "tier=edited"
