@apiserver
Feature: Watching objects
  A watch delivers the changes after the resourceVersion it starts from, reports a compacted
  starting point as an in-stream 410 Expired error, sends bookmarks only to watchers that ask for
  them, and follows objects in and out of its selector (reference/fake-apiserver-semantics.md §5.8).

  @API_WATCH_001 @must
  Scenario: A watch from a resourceVersion receives only the changes after it
    Given a ConfigMap "default/a"
    And the current resourceVersion of ConfigMaps is remembered
    And a ConfigMap "default/b"
    And the ConfigMap "default/a" has been relabelled "edited=true"
    When ConfigMaps in "default" are watched from the remembered resourceVersion
    Then the watch receives exactly these events, in order:
      | type     | name |
      | ADDED    | b    |
      | MODIFIED | a    |

  @API_WATCH_002 @must
  Scenario: A watch without a resourceVersion starts with every existing object
    Given a ConfigMap "default/a"
    And a ConfigMap "default/b"
    When ConfigMaps in "default" are watched
    Then the watch receives exactly these events, in any order:
      | type  | name |
      | ADDED | a    |
      | ADDED | b    |

  @API_WATCH_003 @must
  Scenario: A watch from a compacted resourceVersion ends with a 410 Expired error event
    Given a ConfigMap "default/a"
    And the current resourceVersion of ConfigMaps is remembered
    And the ConfigMap "default/a" has been relabelled "edited=true"
    And the cluster's storage has been compacted
    When ConfigMaps in "default" are watched from the remembered resourceVersion
    Then the watch receives an ERROR event with code 410 and reason "Expired" saying the remembered resourceVersion is too old
    And the watch is closed

  @API_WATCH_004 @must
  Scenario: A watch that does not ask for bookmarks never receives one
    Given a ConfigMap "default/a"
    And a watch on ConfigMaps in "default"
    When 5 minutes pass
    Then the watch receives no BOOKMARK event

  @API_WATCH_005 @may
  Scenario: A watch that asks for bookmarks receives them with only a resourceVersion
    Given a ConfigMap "default/a"
    And a watch on ConfigMaps in "default" that asks for bookmarks
    When 5 minutes pass
    Then the watch receives a BOOKMARK event that carries only a resourceVersion

  @API_WATCH_006 @must
  Scenario Outline: An object that <case> a watch's label selector is sent as <event>
    Given a ConfigMap "default/cfg" labelled "<before>"
    And a watch on ConfigMaps in "default" labelled "app=web"
    When the ConfigMap "default/cfg" is relabelled "<after>"
    Then the watch receives exactly these events, in order:
      | type    | name |
      | <event> | cfg  |

    Examples:
      | case         | before  | after              | event    |
      | leaves       | app=web | app=db             | DELETED  |
      | enters       | app=db  | app=web            | ADDED    |
      | stays inside | app=web | app=web,tier=front | MODIFIED |

  @API_WATCH_007 @must
  Scenario: A watch by name sees nothing of other objects
    Given a ConfigMap "default/a"
    And a ConfigMap "default/b"
    And a watch on the ConfigMap "default/a" by name
    When the ConfigMap "default/b" is deleted
    Then the watch receives no events

  @API_WATCH_008 @should
  Scenario: A deletion is sent with the object's last state and a new resourceVersion
    Given a ConfigMap "default/a" labelled "app=web"
    And a watch on ConfigMaps in "default"
    When the ConfigMap "default/a" is deleted
    Then the watch receives a DELETED event for "a" labelled "app=web" with a resourceVersion newer than the object's last one
