@apiserver @wire
Feature: Limits on what a client sends
  The apiserver bounds what it decodes and stores: nesting depth, ConfigMap and Secret data, and
  the size etcd accepts. Each refusal is the Status kube-apiserver gives, and a refused request
  writes nothing (reference/apiserver-for-any-client.md §4).

  @WIRE_LIMITS_001 @must
  Scenario: A body nested 1000 deep is a 400 BadRequest Status and writes nothing
    When a ConfigMap "default/deep" nested 1000 deep is created over the wire
    Then the answer is a Status with code 400 and reason "BadRequest"
    And the Status message contains "exceeded max depth"
    And nothing was written

  @WIRE_LIMITS_002 @must
  Scenario: ConfigMap data over 1 MiB is a 422 Invalid Status and writes nothing
    When a ConfigMap "default/big" holding 1048577 bytes of data is created over the wire
    Then the answer is a Status with code 422 and reason "Invalid"
    And the Status carries the message:
      """
      ConfigMap "big" is invalid: []: Too long: may not be more than 1048576 bytes
      """
    And nothing was written

  @WIRE_LIMITS_003 @must
  Scenario: An object larger than etcd accepts is etcd's 500 relayed without a reason, and writes nothing
    When a Pod "default/huge" carrying 1700000 bytes of arguments is created over the wire
    Then the answer is a Status with code 500 and no reason
    And the Status carries the message:
      """
      etcdserver: request is too large
      """
    And nothing was written

  @WIRE_LIMITS_004 @must
  Scenario: An eviction with delete options of the wrong type is a 400 BadRequest Status and writes nothing
    Given a Node "n1" that is Ready
    And a running Pod "default/web-0" on Node "n1"
    When the Pod "default/web-0" is evicted over the wire with the delete options:
      """
      {"gracePeriodSeconds": "x"}
      """
    Then the answer is a Status with code 400 and reason "BadRequest"
    And the Status carries the message:
      """
      Eviction in version "v1" cannot be handled as a Eviction: json: cannot unmarshal string into Go struct field DeleteOptions.deleteOptions.gracePeriodSeconds of type int64
      """
    And nothing was written
