Feature: Bad input around machine deletion
  What happens with hook annotations that are not valid keys, drain labels with unknown values,
  MachineDrainRules the webhook refuses, and Machines whose objects are already gone.

  Background:
    Given a Cluster "c1" whose control plane Machine "cp-0" is running

  @apiserver @seed_000 @must @MD_BAD_001
  Scenario Outline: A hook annotation with <what> is refused
    When a Machine "m1" of the Cluster "c1" annotated "<key>" is created
    Then the write is refused with 422 "Invalid"
    And the Machine "m1" is gone

    Examples:
      | case      | what                         | key                                                                                                             |
      | too-long  | a hook name of 64 characters | pre-drain.delete.hook.machine.cluster.x-k8s.io/migrate-important-app-before-the-node-is-drained-and-gone-for-go |
      | empty     | an empty hook name           | pre-terminate.delete.hook.machine.cluster.x-k8s.io/                                                             |
      | bad-chars | a hook name with a space     | pre-drain.delete.hook.machine.cluster.x-k8s.io/migrate app                                                      |

  @machine_controller @seed_001 @must @MD_BAD_002
  Scenario Outline: A Pod labelled cluster.x-k8s.io/drain=<value> is evicted like any other
    Given a running Machine "m1"
    And the Node of "m1" runs a Pod "default/web-0" labelled "cluster.x-k8s.io/drain=<value>"
    When the Machine "m1" is deleted
    Then the Pod "default/web-0" is evicted

    Examples:
      | case       | value           |
      | drain      | drain           |
      | true       | true            |
      | two-dashes | wait--completed |
      | skipped    | skipped         |

  @machine_controller @seed_001 @should @MD_BAD_003
  Scenario Outline: A MachineDrainRule with an order and behavior <behavior> is refused
    When a MachineDrainRule "default/<case>" with behavior <behavior> and order 5 is created
    Then the write is refused with 422 "Invalid"
    And the refusal names the field "spec.drain.order" with the message:
      """
      Invalid value: 5: order must not be set if drain behavior is "Skip" or "WaitCompleted"
      """

    Examples:
      | case           | behavior      |
      | skip           | Skip          |
      | wait-completed | WaitCompleted |

  @machine_controller @seed_001 @should @MD_BAD_004
  Scenario: A Machine whose bootstrap config is already gone is still deleted
    Given a running Machine "m1"
    And the FakeBootstrapConfig "m1" has been deleted and is gone
    When the Machine "m1" is deleted
    Then within 60 seconds the Machine "m1" is gone
