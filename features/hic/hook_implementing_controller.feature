@hic
Feature: A hook implementing controller acts on its own hooks, once its Machines are being deleted
  A hook implementing controller (HIC) watches Machines, acts when a Machine carrying its hook is being
  deleted, and removes its hook once its work is done; it may add its hook to the Machines it selects
  (seed 000 "Hook Implementing Controller Design"). These scenarios drive the HIC under test: the
  reference HIC by default, or a HIC of your own with `lifecycle-tck conformance --target hic`. "The HIC's
  hooks" are the hooks its config claims; the machine controller is the reference one.

  Background:
    Given a Cluster "c1" whose control plane Machine "cp-0" is running

  Rule: A HIC acts only once its Machine is being deleted

    @seed_000 @must @HIC_ACT_001 @HIC_ACT_002 @MD_HIC_001
    Scenario: The HIC leaves its hooks, and the Machine, alone while the Machine is not being deleted
      Given the hook implementing controller under test is running
      And a running Machine "m1" that carries the HIC's hooks
      When 10 minutes pass
      Then the Machine "m1" still carries the HIC's hooks
      And the HIC wrote nothing to the Machine "m1" but its own hooks

    @seed_000 @must @HIC_ACT_003 @MD_HIC_002
    Scenario: The HIC removes its hooks once its work is done, and the deletion moves on
      Given the hook implementing controller under test is running
      And a running Machine "m1" that carries the HIC's hooks
      When the Machine "m1" is deleted
      Then within 10 minutes the HIC has removed its hooks from the Machine "m1"
      And within 600 seconds the Machine "m1" is gone

    @seed_000 @should @HIC_ACT_004 @MD_HIC_003
    Scenario: The HIC removes only its own hooks; another owner's hooks stay and keep the Machine waiting
      Given the hook implementing controller under test is running
      And a running Machine "m1" that carries the HIC's hooks and another owner's hook at each of their lifecycle points
      When the Machine "m1" is deleted
      Then within 10 minutes the HIC has removed its hooks from the Machine "m1"
      And the Machine "m1" still carries another owner's hooks and waits for them
      And the HIC removed no hook it does not manage

    @seed_000 @must @HIC_ACT_005
    Scenario: The HIC handles many Machines being deleted at once
      Given the hook implementing controller under test is running
      And 5 running Machines "w-1" to "w-5" that carry the HIC's hooks
      When the Machines "w-1" to "w-5" are deleted
      Then within 15 minutes the Machines "w-1" to "w-5" are gone

    @seed_000 @should @MD_HIC_007
    Scenario: A pre-drain HIC removes its hook once the Machine is being deleted, before the drain
      Given the HIC manages a pre-drain hook
      And the hook implementing controller under test is running
      And a running Machine "m1" that carries the HIC's hooks
      When the Machine "m1" is deleted
      Then within 10 minutes the HIC has removed its hooks from the Machine "m1"
      And the HIC removed its pre-drain hooks from the Machine "m1" once it was being deleted, before its Node was cordoned

    @seed_000 @may @MD_HIC_006
    Scenario: A HIC that manages a hook at each lifecycle point removes both, and the deletion moves on
      Given the HIC manages a hook at each lifecycle point
      And the hook implementing controller under test is running
      And a running Machine "m1" that carries the HIC's hooks
      When the Machine "m1" is deleted
      Then within 10 minutes the HIC has removed its hooks from the Machine "m1"
      And within 600 seconds the Machine "m1" is gone

  Rule: A HIC survives what a real API server does to its clients

    @seed_000 @must @HIC_ROBUST_001
    Scenario Outline: The HIC retries writes answered with <status>
      Given the hook implementing controller under test is running
      And a running Machine "m1" that carries the HIC's hooks
      And the API server answers the HIC's next 2 writes to Machines with "<status>"
      When the Machine "m1" is deleted
      Then within 10 minutes the HIC has removed its hooks from the Machine "m1"
      And within 600 seconds the Machine "m1" is gone

      Examples:
        | case     | status              |
        | conflict | 409 Conflict        |
        | throttle | 429 TooManyRequests |
        | internal | 500 InternalError   |

    # In-process the reference HIC has no watch stream to drop (faults.py): the scenario then checks only
    # that it acts. Over the wire (--target hic) its Machine watch ends after one event, and its next watch
    # from a resourceVersion answers 410 Expired, so it must watch again and list again.
    @seed_000 @must @HIC_ROBUST_002
    Scenario: The HIC survives a dropped watch and a 410 Expired
      Given the API server drops the HIC's next watch of Machines after 1 event and answers its next watch from a resourceVersion with "410 Expired"
      And the hook implementing controller under test is running
      And a running Machine "m1" that carries the HIC's hooks
      When the Machine "m1" is deleted
      Then within 10 minutes the HIC has removed its hooks from the Machine "m1"
      And within 600 seconds the Machine "m1" is gone

  Rule: A HIC keeps no state it cannot rebuild from the Machines

    @seed_000 @must @HIC_RESTART_001
    Scenario: A Machine deleted while the HIC was down gets its hooks removed once the HIC is back
      Given the hook implementing controller under test is running
      And a running Machine "m1" that carries the HIC's hooks
      And the hook implementing controller under test has been stopped
      And the Machine "m1" has been deleted
      When the hook implementing controller under test is started again
      Then within 10 minutes the HIC has removed its hooks from the Machine "m1"
      And within 600 seconds the Machine "m1" is gone

    @seed_000 @should @HIC_RESTART_002
    Scenario: A HIC restarted after it finished with a Machine does not write to it again
      Given the hook implementing controller under test is running
      And a running Machine "m1" that carries the HIC's hooks and another owner's hook at each of their lifecycle points
      And the Machine "m1" has been deleted
      And the HIC has finished with the Machine "m1"
      When the hook implementing controller under test is killed and started again
      Then the HIC made no further write to the Machine "m1"
      And the Machine "m1" still carries another owner's hooks and waits for them

  Rule: A HIC may add its hooks to the Machines it selects

    @seed_000 @may @HIC_ADD_001
    Scenario: A HIC that says it adds its hooks adds them to a new Machine it selects
      Given the hook implementing controller under test is running
      And the HIC claims to add its hooks to the Machines it selects
      When a Machine "m2" that the HIC selects is created
      Then within 60 seconds the Machine "m2" carries the HIC's hooks
      And the HIC wrote nothing to the Machine "m2" but its own hooks

    @seed_000 @may @MD_HIC_004
    Scenario: A HIC that says it adds its hooks adds them to a Machine that existed before it started
      Given the HIC claims to add its hooks to the Machines it selects
      And a running Machine "m2" that the HIC selects
      When the hook implementing controller under test is started again
      Then within 60 seconds the Machine "m2" carries the HIC's hooks
      And the HIC wrote nothing to the Machine "m2" but its own hooks
