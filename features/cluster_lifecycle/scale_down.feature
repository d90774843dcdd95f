@cluster_controller
Feature: Scaling MachineDeployments and MachineSets down deletes Machines, hooks and all
  Machine deletions come from scale-downs of MachineDeployments and MachineSets (seed 001, the
  causes it lists first). The MachineSet picks the Machine by its delete policy, a Machine annotated
  cluster.x-k8s.io/delete-machine first (reference/capi-machine-deletion.md §6); the Machine then goes
  through the machine deletion, pre-drain hooks included (seed 000 Story 2).

  Background:
    Given a Cluster "c1" whose control plane Machine "cp-0" is running

  @seed_000 @seed_001 @must @CL_SCALE_001
  Scenario: A Machine deleted by a scale-down waits for its pre-drain hook before its Node is drained
    Given a MachineDeployment "md-0" of the Cluster with 2 running Machines annotated "pre-drain.delete.hook.machine.cluster.x-k8s.io/custom-drain: my-drain-controller"
    When the MachineDeployment "md-0" is scaled to 1 replicas
    Then within 60 seconds the deleted Machine of the MachineDeployment "md-0" is deleting with reason "WaitingForPreDrainHook"
    And the Node of the deleted Machine of the MachineDeployment "md-0" was never cordoned
    When the hook owner "my-drain-controller" removes the annotation "pre-drain.delete.hook.machine.cluster.x-k8s.io/custom-drain" from the deleted Machine of the MachineDeployment "md-0"
    Then within 120 seconds the MachineDeployment "md-0" has 1 running Machines and none being deleted

  @must @CL_DELPOLICY_001
  Scenario Outline: A MachineSet scaled down deletes the Machine its delete policy ranks first
    Given a MachineSet "ms-0" of the Cluster with the delete policy "<policy>" and 3 running Machines created a minute apart
    When the MachineSet "ms-0" is scaled to 2 replicas
    Then the <deleted> Machine of the MachineSet "ms-0" is marked for deletion and the other Machines are not

    Examples:
      | case   | policy | deleted |
      | oldest | Oldest | oldest  |
      | newest | Newest | newest  |

  @must @CL_DELPOLICY_001
  Scenario: A MachineSet with the Random delete policy deletes one Machine when scaled down by one
    Given a MachineSet "ms-0" of the Cluster with the delete policy "Random" and 3 running Machines created a minute apart
    When the MachineSet "ms-0" is scaled to 2 replicas
    Then one Machine of the MachineSet "ms-0" is marked for deletion and the other Machines are not

  @must @CL_DELPOLICY_002
  Scenario Outline: The Machine annotated cluster.x-k8s.io/delete-machine is deleted first, whatever the policy
    Given a MachineSet "ms-0" of the Cluster with the delete policy "<policy>" and 3 running Machines created a minute apart
    And the middle Machine of the MachineSet "ms-0" has been annotated "cluster.x-k8s.io/delete-machine: yes"
    When the MachineSet "ms-0" is scaled to 2 replicas
    Then the middle Machine of the MachineSet "ms-0" is marked for deletion and the other Machines are not

    Examples:
      | case   | policy |
      | oldest | Oldest |
      | newest | Newest |
      | random | Random |
