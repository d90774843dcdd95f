@apiserver
Feature: Finalizers
  An object with finalizers is only marked for deletion; it goes when an update leaves it without
  finalizers (reference/fake-apiserver-semantics.md §5.6).

  @API_FIN_001 @must
  Scenario: Deleting an object without finalizers removes it at once
    Given a ConfigMap "default/cfg"
    When the ConfigMap "default/cfg" is deleted
    Then the ConfigMap "default/cfg" is gone

  @API_FIN_002 @must
  Scenario: Deleting an object with a finalizer only marks it for deletion
    Given a ConfigMap "default/cfg" with the finalizer "example.com/hold"
    When the ConfigMap "default/cfg" is deleted
    Then the ConfigMap "default/cfg" is marked for deletion
    And the ConfigMap "default/cfg" has the finalizer "example.com/hold"

  @API_FIN_003 @must
  Scenario: Removing the last finalizer of an object marked for deletion removes it, and watchers see it deleted
    Given a ConfigMap "default/cfg" with the finalizer "example.com/hold"
    And the ConfigMap "default/cfg" has been deleted
    And a watch on ConfigMaps in "default"
    When the finalizer "example.com/hold" is removed from the ConfigMap "default/cfg"
    Then the ConfigMap "default/cfg" is gone
    And the watch receives exactly these events, in order:
      | type    | name |
      | DELETED | cfg  |

  @API_FIN_004 @must
  Scenario: An object marked for deletion stays while another finalizer remains
    Given a ConfigMap "default/cfg" with the finalizers "example.com/hold" and "example.com/also"
    And the ConfigMap "default/cfg" has been deleted
    When the finalizer "example.com/hold" is removed from the ConfigMap "default/cfg"
    Then the ConfigMap "default/cfg" is marked for deletion
    And the ConfigMap "default/cfg" has the finalizer "example.com/also"

  @API_FIN_005 @must
  Scenario: No finalizer can be added to an object marked for deletion
    Given a ConfigMap "default/cfg" with the finalizer "example.com/hold"
    And the ConfigMap "default/cfg" has been deleted
    When the finalizer "example.com/late" is added to the ConfigMap "default/cfg"
    Then the write is refused with 422 "Invalid" and the message:
      """
      ConfigMap "cfg" is invalid: metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"example.com/late"}
      """

  @API_FIN_006 @should
  Scenario: Deleting an object already marked for deletion changes nothing
    Given a ConfigMap "default/cfg" with the finalizer "example.com/hold"
    And the ConfigMap "default/cfg" has been deleted
    When the ConfigMap "default/cfg" is deleted
    Then nothing was written
    And the ConfigMap "default/cfg" is marked for deletion
