@topology_controller
Feature: Lifecycle hooks and the MachineDeployments of a Cluster with a managed topology
  The workers of a topology (spec.topology.workers.machineDeployments) are among the objects
  BeforeClusterCreate holds back, follow a version bump only once AfterControlPlaneUpgrade lets them, and
  are taken apart, through the machine deletion, only once BeforeClusterDelete lets the Cluster go
  (seed 002 "Runtime hook definitions"). Each Cluster here has one MachineDeployment "<cluster>-md-0".

  Background:
    Given a Runtime Extension "ext" registered with the failure policy Fail

  # The seed's footnote also names "the templates derived from the ClusterClass": this world's topology
  # controller derives no per-Cluster templates (it references the ClusterClass's), so none are checked.
  @seed_002 @must @RT_BCC_001
  Scenario: A blocking BeforeClusterCreate keeps the MachineDeployments from being created
    Given the extension "ext" answers BeforeClusterCreate with retryAfterSeconds 30
    When a Cluster "c1" with a managed topology at version "v1.31.0" and 2 worker Machines is created
    Then the extension "ext" received BeforeClusterCreate
    And the Cluster "c1" has no MachineDeployments
    And the Cluster "c1" has neither an infrastructure cluster nor a control plane

  @seed_002 @must @RT_BCC_003
  Scenario: A non-blocking BeforeClusterCreate lets the MachineDeployments be created with the control plane, at the topology version
    When a Cluster "c1" with a managed topology at version "v1.31.0" and 2 worker Machines is created
    Then the MachineDeployment "c1-md-0" has the version "v1.31.0"
    And the Cluster "c1" has its infrastructure cluster and control plane

  @seed_002 @must @RT_BCU_004
  Scenario: A blocking BeforeClusterUpgrade keeps the workers at their version too
    Given a running Cluster "c1" with a managed topology at version "v1.31.0" and 2 worker Machines
    And the extension "ext" answers BeforeClusterUpgrade with retryAfterSeconds 60 and the message "backing up"
    When the Cluster "c1" is upgraded to "v1.32.0"
    Then the MachineDeployment "c1-md-0" stays at the version "v1.31.0" for 180 seconds
    And the KubeadmControlPlane "c1" has the version "v1.31.0"

  @seed_002 @must @RT_ACPU_002
  Scenario: While AfterControlPlaneUpgrade blocks, the MachineDeployments keep their version
    Given a running Cluster "c1" with a managed topology at version "v1.31.0" and 2 worker Machines
    And the extension "ext" answers AfterControlPlaneUpgrade with retryAfterSeconds 60 and the message "checking the API"
    When the Cluster "c1" is upgraded to "v1.32.0"
    Then within 300 seconds the extension "ext" receives AfterControlPlaneUpgrade
    And the MachineDeployment "c1-md-0" stays at the version "v1.31.0" for 180 seconds
    And the Cluster "c1" reports TopologyReconciled "False" with reason "LifecycleHookBlocking" and the message:
      """
      hook "AfterControlPlaneUpgrade" is blocking: checking the API
      """
    And the extension "ext" never received AfterClusterUpgrade

  @seed_002 @must @RT_ACPU_003
  Scenario: Once AfterControlPlaneUpgrade passes, the MachineDeployments follow the new version, then AfterClusterUpgrade is called
    Given a running Cluster "c1" with a managed topology at version "v1.31.0" and 2 worker Machines
    And new worker Machines of the Cluster "c1" take 60 seconds to provision
    And the extension "ext" answers AfterControlPlaneUpgrade with retryAfterSeconds 60 and the message "checking the API"
    And the Cluster "c1" has been upgraded to "v1.32.0"
    And the extension "ext" has received AfterControlPlaneUpgrade
    When the extension "ext" answers AfterControlPlaneUpgrade with "Success"
    Then within 60 seconds the MachineDeployment "c1-md-0" has the version "v1.32.0"
    And the extension "ext" never received AfterClusterUpgrade
    And within 600 seconds every Machine of the MachineDeployment "c1-md-0" has the version "v1.32.0"
    And within 60 seconds the extension "ext" receives AfterClusterUpgrade
    And the Cluster "c1" has no pending hooks

  # Seed 002 "Before Cluster Upgrade", footnote: a new version waits while an upgrade or a worker rollout
  # is in progress (upstream's computeControlPlaneVersion).
  @seed_002 @must @RT_BCU_003
  Scenario: A new version waits for the workers' rollout in progress before BeforeClusterUpgrade is called
    Given a running Cluster "c1" with a managed topology at version "v1.31.0" and 2 worker Machines
    And new worker Machines of the Cluster "c1" take 60 seconds to provision
    And the Cluster "c1" has been upgraded to "v1.32.0"
    And the workers of the Cluster "c1" have started rolling out to "v1.32.0"
    When the Cluster "c1" is upgraded to "v1.33.0"
    Then the last BeforeClusterUpgrade request to "ext" carried "toKubernetesVersion" "v1.32.0"
    And within 600 seconds the extension "ext" receives BeforeClusterUpgrade to "v1.33.0" only once every Machine of the MachineDeployment "c1-md-0" has the version "v1.32.0"

  @seed_002 @seed_000 @must @RT_BCD_004
  Scenario: The worker Machines are deleted, through the machine deletion, only once BeforeClusterDelete lets the Cluster go
    Given a running Cluster "c1" with a managed topology at version "v1.31.0" and 2 worker Machines annotated "pre-terminate.delete.hook.machine.cluster.x-k8s.io/backup: backup-operator"
    And the extension "ext" answers BeforeClusterDelete with retryAfterSeconds 60
    And the Cluster "c1" has been deleted
    When the extension "ext" answers BeforeClusterDelete with "Success"
    Then within 120 seconds every Machine of the MachineDeployment "c1-md-0" is deleting with reason "WaitingForPreTerminateHook"
    And no Machine of the MachineDeployment "c1-md-0" was deleted before the Cluster "c1" was marked ok to delete
    And the Cluster "c1" exists
