@apiserver @wire
Feature: Watch streams on the wire
  A watch is answered 200 as "application/json" with a chunked body carrying one compact JSON
  object per event, each on its own line, which is how every Python client splits the stream. A
  starting point that storage has compacted away is not an HTTP error: the stream carries one
  ERROR event with a 410 Expired Status and ends (reference/fake-apiserver-semantics.md §5.8).

  @WIRE_WATCH_001 @must
  Scenario: A watch streams each event as one compact JSON object on its own line
    Given a ConfigMap "default/a"
    And a watch over the wire on ConfigMaps in "default"
    When the ConfigMap "default/a" is relabelled "edited=true"
    And a ConfigMap "default/b" is created
    Then the watch stream is answered with code 200 as "application/json"
    And the watch stream carries one compact JSON object per line
    And the watch receives exactly these events, in order:
      | type     | name |
      | MODIFIED | a    |
      | ADDED    | b    |

  @WIRE_WATCH_002 @must
  Scenario: A watch from a compacted resourceVersion is answered 200, then ends after a 410 Expired ERROR event
    Given a ConfigMap "default/a"
    And the current resourceVersion of ConfigMaps is remembered
    And the ConfigMap "default/a" has been relabelled "edited=true"
    And the cluster's storage has been compacted
    When ConfigMaps in "default" are watched over the wire from the remembered resourceVersion
    Then the watch stream is answered with code 200 as "application/json"
    And the watch stream carries one compact JSON object per line
    And the watch receives an ERROR event with code 410 and reason "Expired" saying the remembered resourceVersion is too old
    And the watch is closed
