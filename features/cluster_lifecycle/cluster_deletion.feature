@cluster_controller
Feature: Deleting a Cluster takes it apart, Machines first
  Cluster API's Cluster controller deletes what a Cluster is made of in a fixed order: its
  MachineDeployments, MachineSets and worker Machines, then its control plane object, then its
  infrastructure cluster (reference/runtime-hooks-and-addons.md §2.4, upstream's reconcileDelete). The
  Machines go through the machine deletion on the way, hooks included (seed 000 "Motivation").

  Background:
    Given a Cluster "c1" with the infrastructure cluster FakeCluster "c1-infra" and the control plane KubeadmControlPlane "c1-cp" running

  @must @CL_INIT_001
  Scenario: A Cluster whose control plane object reports initialized has its control plane initialized
    Then the Cluster "c1" reports its control plane initialized

  @must @CL_CASCADE_001
  Scenario: The control plane goes only after the workers, the infrastructure only after the control plane
    Given a MachineDeployment "md-0" of the Cluster with 2 running Machines
    When the Cluster "c1" is deleted
    Then within 600 seconds the Cluster "c1" is gone
    And the KubeadmControlPlane "c1-cp" was deleted only after the MachineDeployment "md-0" was gone
    And the FakeCluster "c1-infra" was deleted only after the KubeadmControlPlane "c1-cp" was gone

  @seed_000 @seed_001 @must @CL_CASCADE_002
  Scenario: A worker Machine waiting for its pre-terminate hook holds the Cluster's deletion
    Given a MachineDeployment "md-0" of the Cluster with one running Machine annotated "pre-terminate.delete.hook.machine.cluster.x-k8s.io/backup: backup-operator"
    When the Cluster "c1" is deleted
    Then within 60 seconds the deleted Machine of the MachineDeployment "md-0" is deleting with reason "WaitingForPreTerminateHook"
    And the Cluster "c1" is deleting with reason "WaitingForWorkersDeletion"
    And the KubeadmControlPlane "c1-cp" exists and is not marked for deletion
    When the hook owner "backup-operator" removes the annotation "pre-terminate.delete.hook.machine.cluster.x-k8s.io/backup" from the deleted Machine of the MachineDeployment "md-0"
    Then within 600 seconds the Cluster "c1" is gone
    And the KubeadmControlPlane "c1-cp" was deleted only after the MachineDeployment "md-0" was gone
