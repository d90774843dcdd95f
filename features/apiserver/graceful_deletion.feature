@apiserver
Feature: Graceful deletion of Pods
  Deleting a running Pod does not remove it: the API server marks it with a deletionTimestamp and a
  grace period, and the kubelet removes it once its containers have stopped
  (reference/fake-apiserver-semantics.md §5.6, §1.3).

  Background:
    Given a Node "n1" that is Ready

  @API_GRACE_001 @must
  Scenario Outline: A deleted running Pod stays, terminating, for the grace period of its spec
    Given a running Pod "default/web-0" on Node "n1" with a termination grace period of <grace> seconds
    When the Pod "default/web-0" is deleted
    Then the Pod "default/web-0" is terminating with a grace period of <grace> seconds
    And the Pod "default/web-0" is due to be removed in <grace> seconds

    Examples:
      | case  | grace |
      | short | 10    |
      | long  | 120   |

  @API_GRACE_001 @must
  Scenario: A Pod whose spec names no grace period gets 30 seconds
    Given a running Pod "default/web-0" on Node "n1"
    When the Pod "default/web-0" is deleted
    Then the Pod "default/web-0" is terminating with a grace period of 30 seconds

  @API_GRACE_002 @must
  Scenario: A grace period given with the deletion overrides the Pod's own
    Given a running Pod "default/web-0" on Node "n1" with a termination grace period of 60 seconds
    When the Pod "default/web-0" is deleted with a grace period of 5 seconds
    Then the Pod "default/web-0" is terminating with a grace period of 5 seconds

  @API_GRACE_003 @must
  Scenario: The deletion of a Pod answers with the Pod itself
    Given a running Pod "default/web-0" on Node "n1"
    When the Pod "default/web-0" is deleted
    Then the deletion answers with the Pod "default/web-0" marked for deletion

  @API_GRACE_004 @must
  Scenario Outline: A Pod that is <state> is removed at once
    Given a Pod "default/web-0" labelled "app=web" that is <state>
    When the Pod "default/web-0" is deleted
    Then the Pod "default/web-0" is gone

    Examples:
      | case      | state     |
      | unbound   | Pending   |
      | succeeded | Succeeded |
      | failed    | Failed    |

  @API_GRACE_005 @must
  Scenario Outline: A second deletion may shorten the grace period but never lengthen it
    Given a running Pod "default/web-0" on Node "n1" with a termination grace period of 60 seconds
    And the Pod "default/web-0" has been deleted
    When the Pod "default/web-0" is deleted with a grace period of <second> seconds
    Then the Pod "default/web-0" is terminating with a grace period of <expected> seconds
    And the Pod "default/web-0" is due to be removed in <expected> seconds

    Examples:
      | case    | second | expected |
      | shorter | 10     | 10       |
      | longer  | 120    | 60       |

  @API_GRACE_005 @must
  Scenario: A shorter grace period counts from the first deletion, not from the second
    Given a running Pod "default/web-0" on Node "n1" with a termination grace period of 60 seconds
    And the Pod "default/web-0" has been deleted
    When 30 seconds pass
    And the Pod "default/web-0" is deleted with a grace period of 40 seconds
    Then the Pod "default/web-0" is terminating with a grace period of 40 seconds
    And the Pod "default/web-0" is due to be removed in 10 seconds

  @API_GRACE_005 @must
  Scenario: A second deletion that names no grace period leaves the terminating Pod as it is
    Given a running Pod "default/web-0" on Node "n1" with a termination grace period of 30 seconds
    When the Pod "default/web-0" is deleted with a grace period of 60 seconds
    And the Pod "default/web-0" is deleted
    Then the Pod "default/web-0" is terminating with a grace period of 60 seconds
    And the Pod "default/web-0" is due to be removed in 60 seconds

  @API_GRACE_010 @should
  Scenario: A grace period too long for a timestamp still deletes gracefully, as upstream works it out
    Given a running Pod "default/web-0" on Node "n1"
    When the Pod "default/web-0" is deleted with a grace period of 1000000000000000 seconds
    Then the Pod "default/web-0" is terminating with a grace period of 1000000000000000 seconds
    And the Pod "default/web-0" is due to be removed in 2003764205 seconds

  @API_GRACE_006 @must
  Scenario Outline: A deletion with a grace period of 0 removes the Pod at once
    Given a Pod "default/web-0" labelled "app=web" that is <state>
    When the Pod "default/web-0" is deleted with a grace period of 0 seconds
    Then the Pod "default/web-0" is gone

    Examples:
      | case        | state       |
      | running     | Ready       |
      | terminating | terminating |

  @API_GRACE_007 @should
  Scenario: A negative grace period is taken as one second
    Given a running Pod "default/web-0" on Node "n1"
    When the Pod "default/web-0" is deleted with a grace period of -5 seconds
    Then the Pod "default/web-0" is terminating with a grace period of 1 seconds

  @API_GRACE_008 @must
  Scenario Outline: The kubelet removes a terminating Pod when its grace period is over, not before
    Given a running Pod "default/web-0" on Node "n1" with a termination grace period of 30 seconds
    And the Pod "default/web-0" has been deleted
    When <seconds> seconds pass
    Then the Pod "default/web-0" <outcome>

    Examples:
      | case   | seconds | outcome        |
      | before | 29      | is terminating |
      | after  | 30      | is gone        |

  @API_GRACE_009 @must
  Scenario: An update to a Pod in its grace period leaves it terminating until the period is over
    Given a running Pod "default/web-0" on Node "n1" with a termination grace period of 30 seconds
    And the Pod "default/web-0" has been deleted
    When the Pod "default/web-0" is relabelled "app=web"
    Then the Pod "default/web-0" is terminating with a grace period of 30 seconds
    And the Pod "default/web-0" is due to be removed in 30 seconds

  @API_GRACE_009 @must
  Scenario: Removing the last finalizer of a Pod in its grace period leaves it terminating until the period is over
    Given a running Pod "default/web-0" on Node "n1" with a termination grace period of 30 seconds
    And the Pod "default/web-0" has the finalizer "example.com/hold"
    And the Pod "default/web-0" has been deleted
    When the finalizer "example.com/hold" is removed from the Pod "default/web-0"
    Then the Pod "default/web-0" is terminating with a grace period of 30 seconds
    And the Pod "default/web-0" is due to be removed in 30 seconds
