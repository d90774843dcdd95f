@topology_controller
Feature: Lifecycle hooks of a Cluster with a managed topology
  The topology controller calls the Runtime Extensions registered through ExtensionConfigs at the
  lifecycle points of seed 002 ("Runtime hook definitions"): blocking hooks hold the transition until
  every extension answers without retryAfterSeconds; non-blocking hooks are called until they succeed.

  Background:
    Given a Runtime Extension "ext" registered with the failure policy Fail

  @seed_002 @must @RT_BCC_001
  Scenario: A blocking BeforeClusterCreate answer keeps the topology from being created
    Given the extension "ext" answers BeforeClusterCreate with retryAfterSeconds 30 and the message "preparing add-ons"
    When a Cluster "c1" with a managed topology at version "v1.31.0" is created
    Then the extension "ext" received BeforeClusterCreate
    And the Cluster "c1" has neither an infrastructure cluster nor a control plane
    And the Cluster "c1" reports TopologyReconciled "False" with reason "LifecycleHookBlocking" and the message:
      """
      hook "BeforeClusterCreate" is blocking: preparing add-ons
      """

  @seed_002 @must @RT_BCC_002
  Scenario: BeforeClusterCreate is called again after retryAfterSeconds, and the topology is created once it passes
    Given the extension "ext" answers BeforeClusterCreate with retryAfterSeconds 30
    When a Cluster "c1" with a managed topology at version "v1.31.0" is created
    Then the extension "ext" receives BeforeClusterCreate again only after 30 seconds
    And the Cluster "c1" has neither an infrastructure cluster nor a control plane

  @seed_002 @must @RT_BCC_003
  Scenario: A non-blocking BeforeClusterCreate answer lets the topology be created at once
    When a Cluster "c1" with a managed topology at version "v1.31.0" is created
    Then the extension "ext" received BeforeClusterCreate
    And the Cluster "c1" has its infrastructure cluster and control plane
    And the KubeadmControlPlane "c1" has the version "v1.31.0"

  # Upstream v1.11+ sends the Cluster with an empty status (cleanupCluster); the seed's examples still show one.
  @seed_002 @must @RT_REQ_001
  Scenario: A hook request carries the Cluster, without its status
    When a Cluster "c1" with a managed topology at version "v1.31.0" is created
    Then the last BeforeClusterCreate request to "ext" carried "apiVersion" "hooks.runtime.cluster.x-k8s.io/v1alpha1"
    And the last BeforeClusterCreate request to "ext" carried "kind" "BeforeClusterCreateRequest"
    And the last BeforeClusterCreate request to "ext" carried "cluster.apiVersion" "cluster.x-k8s.io/v1beta1"
    And the last BeforeClusterCreate request to "ext" carried "cluster.kind" "Cluster"
    And the last BeforeClusterCreate request to "ext" carried "cluster.metadata.name" "c1"
    And the last BeforeClusterCreate request to "ext" carried "cluster.metadata.namespace" "default"
    And the last BeforeClusterCreate request to "ext" carried "cluster.spec.topology.version" "v1.31.0"
    And the last BeforeClusterCreate request to "ext" carried "cluster.status.infrastructureReady" "false"
    And the last BeforeClusterCreate request to "ext" carried "cluster.status.controlPlaneReady" "false"
    And the last BeforeClusterCreate request to "ext" carried "cluster.status.conditions" "null"
    And the last BeforeClusterCreate request to "ext" carried "settings.extensionConfigName" "ext"

  @seed_002 @must @RT_ACPI_001
  Scenario: AfterControlPlaneInitialized is pending from creation and called once the control plane is initialized
    When a Cluster "c1" with a managed topology at version "v1.31.0" is created
    Then the Cluster "c1" has the pending hooks "AfterControlPlaneInitialized"
    And the extension "ext" never received AfterControlPlaneInitialized
    And within 120 seconds the extension "ext" receives AfterControlPlaneInitialized
    And the Cluster "c1" has no pending hooks

  @seed_002 @must @RT_ACPI_002
  Scenario: A failing AfterControlPlaneInitialized stays pending and the failure is reported
    Given the extension "ext" answers AfterControlPlaneInitialized with "Failure" and the message "not yet"
    When a Cluster "c1" with a managed topology at version "v1.31.0" is created
    Then within 120 seconds the extension "ext" receives AfterControlPlaneInitialized
    And the Cluster "c1" has the pending hooks "AfterControlPlaneInitialized"
    And the Cluster "c1" reports TopologyReconciled "False" with reason "TopologyReconcileFailed" and the message:
      """
      failed to call extension handlers for hook "AfterControlPlaneInitialized.hooks.runtime.cluster.x-k8s.io": failed to call extension handler "after-control-plane-initialized.ext": got failure response with message: not yet
      """

  # Reference §2.3: the intent stays in runtime.cluster.x-k8s.io/pending-hooks until a call succeeds; a
  # failing call is a reconcile error, retried with back-off on the virtual clock.
  @seed_002 @must @RT_ACPI_003
  Scenario Outline: An AfterControlPlaneInitialized call that failed (<case>) is made again until it succeeds, and only then unmarked
    Given a Cluster "c1" with a managed topology at version "v1.31.0" whose control plane is provisioning
    And <failure>
    And the Cluster "c1" has reported the failure of AfterControlPlaneInitialized
    When <recovery>
    Then within 60 seconds the extension "ext" answers AfterControlPlaneInitialized with "Success"
    And the Cluster "c1" has no pending hooks
    And the Cluster "c1" reports TopologyReconciled "True"

    Examples:
      | case               | failure                                                                                           | recovery                                                                 |
      | a Failure answer   | the extension "ext" answers AfterControlPlaneInitialized with "Failure" and the message "not yet" | the extension "ext" answers AfterControlPlaneInitialized with "Success"  |
      | connection refused | the extension "ext" has stopped                                                                   | the extension "ext" is started again                                     |

  # AfterControlPlaneInitialized answers with a CommonResponse (no retryAfterSeconds): an answer that asks
  # to be called again is a success like any other.
  @seed_002 @must @RT_ACPI_004
  Scenario: AfterControlPlaneInitialized does not block: an answer asking to retry later still counts as done
    Given the extension "ext" answers AfterControlPlaneInitialized with retryAfterSeconds 300
    When a Cluster "c1" with a managed topology at version "v1.31.0" is created
    Then within 120 seconds the extension "ext" receives AfterControlPlaneInitialized
    And the Cluster "c1" has no pending hooks
    And the Cluster "c1" reports TopologyReconciled "True"

  # Seed 002 says AfterControlPlaneInitialized "does not block any further changes to the Cluster": its
  # answer cannot ask to wait (RT_ACPI_004). A failing call is a reconcile error, and upstream's
  # reconcileState (internal/controllers/topology/cluster/reconcile_state.go) calls the After hooks before
  # it reconciles any object of the topology: the topology goes no further until the hook succeeds, as the
  # seed's "Risks and Mitigations" grants for an extension that "fails indefinitely".
  @seed_002 @must @RT_ACPI_005
  Scenario: While AfterControlPlaneInitialized fails, a new version of the topology is not given to the control plane
    Given the extension "ext" answers AfterControlPlaneInitialized with "Failure" and the message "not yet"
    And a Cluster "c1" with a managed topology at version "v1.31.0" has been created
    And the Cluster "c1" has reported the failure of AfterControlPlaneInitialized
    When the Cluster "c1" is upgraded to "v1.32.0"
    Then the KubeadmControlPlane "c1" stays at the version "v1.31.0" for 120 seconds
    And the Cluster "c1" reports TopologyReconciled "False" with reason "TopologyReconcileFailed" and a message containing "AfterControlPlaneInitialized"

  @seed_002 @must @RT_ACPI_005
  Scenario: Once AfterControlPlaneInitialized succeeds, the change of the topology that waited goes on
    Given the extension "ext" answers AfterControlPlaneInitialized with "Failure" and the message "not yet"
    And a Cluster "c1" with a managed topology at version "v1.31.0" has been created
    And the Cluster "c1" has reported the failure of AfterControlPlaneInitialized
    And the Cluster "c1" has been upgraded to "v1.32.0"
    When the extension "ext" answers AfterControlPlaneInitialized with "Success"
    Then within 120 seconds the extension "ext" answers AfterControlPlaneInitialized with "Success"
    And within 60 seconds the KubeadmControlPlane "c1" has the version "v1.32.0"

  @seed_002 @must @RT_BCU_001
  Scenario: A blocking BeforeClusterUpgrade keeps the control plane at its version, and is told both versions
    Given a running Cluster "c1" with a managed topology at version "v1.31.0"
    And the extension "ext" answers BeforeClusterUpgrade with retryAfterSeconds 60 and the message "backing up"
    When the Cluster "c1" is upgraded to "v1.32.0"
    Then the last BeforeClusterUpgrade request to "ext" carried "fromKubernetesVersion" "v1.31.0"
    And the last BeforeClusterUpgrade request to "ext" carried "toKubernetesVersion" "v1.32.0"
    And the KubeadmControlPlane "c1" has the version "v1.31.0"
    And the Cluster "c1" reports TopologyReconciled "False" with reason "LifecycleHookBlocking" and the message:
      """
      hook "BeforeClusterUpgrade" is blocking: backing up
      """

  @seed_002 @must @RT_BCU_002
  Scenario: A before-upgrade hook annotation blocks the upgrade without calling the extensions
    Given a running Cluster "c1" with a managed topology at version "v1.31.0"
    And the Cluster "c1" has been annotated "before-upgrade.hook.cluster.cluster.x-k8s.io/wait-for-backup"
    When the Cluster "c1" is upgraded to "v1.32.0"
    Then the extension "ext" never received BeforeClusterUpgrade
    And the KubeadmControlPlane "c1" has the version "v1.31.0"
    And the Cluster "c1" reports TopologyReconciled "False" with reason "LifecycleHookBlocking" and the message:
      """
      hook "BeforeClusterUpgrade" is blocking: annotation [before-upgrade.hook.cluster.cluster.x-k8s.io/wait-for-backup] is set
      """

  @seed_002 @must @RT_UPG_001
  Scenario: An upgrade that BeforeClusterUpgrade lets pass marks the After hooks pending and upgrades the control plane
    Given a running Cluster "c1" with a managed topology at version "v1.31.0"
    And the extension "ext" answers AfterControlPlaneUpgrade with retryAfterSeconds 600
    When the Cluster "c1" is upgraded to "v1.32.0"
    Then the extension "ext" received BeforeClusterUpgrade
    And the Cluster "c1" has the pending hooks "AfterClusterUpgrade,AfterControlPlaneUpgrade"
    And the KubeadmControlPlane "c1" has the version "v1.32.0"

  @seed_002 @must @RT_ACPU_001
  Scenario: AfterControlPlaneUpgrade is called with the new version once the control plane is upgraded, and blocks AfterClusterUpgrade
    Given a running Cluster "c1" with a managed topology at version "v1.31.0"
    And the extension "ext" answers AfterControlPlaneUpgrade with retryAfterSeconds 600
    When the Cluster "c1" is upgraded to "v1.32.0"
    Then within 300 seconds the extension "ext" receives AfterControlPlaneUpgrade
    And the last AfterControlPlaneUpgrade request to "ext" carried "kubernetesVersion" "v1.32.0"
    And the extension "ext" never received AfterClusterUpgrade
    And the Cluster "c1" has the pending hooks "AfterClusterUpgrade,AfterControlPlaneUpgrade"

  @seed_002 @must @RT_ACU_001
  Scenario: AfterClusterUpgrade is called once the whole cluster is upgraded, and does not block
    Given a running Cluster "c1" with a managed topology at version "v1.31.0"
    When the Cluster "c1" is upgraded to "v1.32.0"
    Then within 300 seconds the extension "ext" receives AfterClusterUpgrade
    And the last AfterClusterUpgrade request to "ext" carried "kubernetesVersion" "v1.32.0"
    And the Cluster "c1" has no pending hooks

  # The classic model (seed 002, Cluster API <= v1.11; DESIGN.md): AfterClusterUpgrade answers with a
  # CommonResponse; Cluster API v1.12+ makes it blocking.
  @seed_002 @must @RT_ACU_002
  Scenario: AfterClusterUpgrade does not block: an answer asking to retry later still counts as done
    Given a running Cluster "c1" with a managed topology at version "v1.31.0"
    And the extension "ext" answers AfterClusterUpgrade with retryAfterSeconds 300
    When the Cluster "c1" is upgraded to "v1.32.0"
    Then within 300 seconds the extension "ext" receives AfterClusterUpgrade
    And the Cluster "c1" has no pending hooks
    And the Cluster "c1" reports TopologyReconciled "True"

  # The classic model again (seed 002 "After Cluster Upgrade": the hook "does not block any further changes or
  # upgrades to the Cluster"); Cluster API v1.12+ refuses a new version while AfterClusterUpgrade asks to retry.
  @seed_002 @must @RT_ACU_003
  Scenario: An AfterClusterUpgrade answer asking to retry later does not hold the next upgrade
    Given a running Cluster "c1" with a managed topology at version "v1.31.0"
    And the extension "ext" answers AfterClusterUpgrade with retryAfterSeconds 600 and the message "checking add-ons"
    And the Cluster "c1" has been upgraded to "v1.32.0"
    And the extension "ext" has received AfterClusterUpgrade
    When the Cluster "c1" is upgraded to "v1.33.0"
    Then within 60 seconds the KubeadmControlPlane "c1" has the version "v1.33.0"
    And the last BeforeClusterUpgrade request to "ext" carried "fromKubernetesVersion" "v1.32.0"

  @seed_002 @must @RT_BCD_001
  Scenario: A blocking BeforeClusterDelete keeps the Cluster and everything in it
    Given a running Cluster "c1" with a managed topology at version "v1.31.0"
    And the extension "ext" answers BeforeClusterDelete with retryAfterSeconds 60
    When the Cluster "c1" is deleted while its extensions answer
    Then the extension "ext" received BeforeClusterDelete
    And the Cluster "c1" is not marked ok to delete
    And the Cluster "c1" is deleting with reason "WaitingForBeforeDeleteHook" and the message "Waiting for BeforeClusterDelete hook"
    And the KubeadmControlPlane "c1" exists and is not marked for deletion
    And the Cluster "c1" has the condition "TopologyReconciled" "False" with reason "Deleted"

  # RT_REQ_001 for the last hook of a Cluster's life: the request carries the Cluster being deleted.
  @seed_002 @must @RT_REQ_001
  Scenario: A BeforeClusterDelete request carries the Cluster being deleted, without its status
    Given a running Cluster "c1" with a managed topology at version "v1.31.0"
    And the extension "ext" answers BeforeClusterDelete with retryAfterSeconds 60
    When the Cluster "c1" is deleted while its extensions answer
    Then the last BeforeClusterDelete request to "ext" carried "apiVersion" "hooks.runtime.cluster.x-k8s.io/v1alpha1"
    And the last BeforeClusterDelete request to "ext" carried "kind" "BeforeClusterDeleteRequest"
    And the last BeforeClusterDelete request to "ext" carried "cluster.kind" "Cluster"
    And the last BeforeClusterDelete request to "ext" carried "cluster.metadata.name" "c1"
    And the last BeforeClusterDelete request to "ext" carried "cluster.metadata.namespace" "default"
    And the last BeforeClusterDelete request to "ext" carried "cluster.spec.topology.version" "v1.31.0"
    And the last BeforeClusterDelete request to "ext" carried "cluster.status.conditions" "null"
    And the last BeforeClusterDelete request to "ext" carried "settings.extensionConfigName" "ext"

  @seed_002 @must @RT_BCD_002
  Scenario: Once BeforeClusterDelete passes the Cluster is marked ok to delete, and its deletion goes on
    Given a running Cluster "c1" with a managed topology at version "v1.31.0"
    And the extension "ext" answers BeforeClusterDelete with retryAfterSeconds 60
    And the Cluster "c1" has been deleted
    When the extension "ext" answers BeforeClusterDelete with "Success"
    Then the extension "ext" receives BeforeClusterDelete again only after 60 seconds
    And the Cluster "c1" is marked ok to delete
    And within 600 seconds the Cluster "c1" is gone

  @seed_002 @must @RT_BCD_003
  Scenario: A Cluster already marked ok to delete is deleted without calling BeforeClusterDelete
    Given a running Cluster "c1" with a managed topology at version "v1.31.0"
    And the Cluster "c1" has been annotated "runtime.cluster.x-k8s.io/ok-to-delete"
    And the extension "ext" answers BeforeClusterDelete with retryAfterSeconds 60
    When the Cluster "c1" is deleted while its extensions answer
    Then the extension "ext" never received BeforeClusterDelete
    And within 600 seconds the Cluster "c1" is gone

  # Seed 002 "Risks and Mitigations": users should be able to intervene by hand. Deleting the
  # ExtensionConfig unregisters its handlers (reference §1.2); marking the Cluster ok-to-delete is RT_BCD_003.
  @seed_002 @should @RT_UNBLOCK_001
  Scenario: Unregistering an extension that blocks a Cluster's creation lets the creation go on
    Given the extension "ext" answers BeforeClusterCreate with retryAfterSeconds 30 and the message "preparing add-ons"
    And a Cluster "c1" with a managed topology at version "v1.31.0" has been created
    When the extension "ext" is unregistered
    Then within 30 seconds the Cluster "c1" has its infrastructure cluster and control plane

  @seed_002 @must @RT_CC_001
  Scenario: A Cluster without a managed topology gets no lifecycle hook
    When a Cluster "plain" without a topology is created
    And 60 seconds pass
    Then the extension "ext" never received BeforeClusterCreate

  @seed_002 @must @RT_CC_002
  Scenario: A paused Cluster gets no lifecycle hook
    When a paused Cluster "c1" with a managed topology at version "v1.31.0" is created
    Then the extension "ext" never received BeforeClusterCreate
    And the Cluster "c1" has the condition "TopologyReconciled" "False" with reason "Paused" and message "Cluster spec.paused is set to true"

  @seed_002 @should @RT_CM_001
  Scenario: The extension answers as the test extension's ConfigMap preloads, and records what it answered
    Given the ConfigMap "c1-ext-test-extension-hookresponses" preloads the response of BeforeClusterCreate with:
      """
      {"Status": "Success", "RetryAfterSeconds": 15, "Message": "from the ConfigMap"}
      """
    When a Cluster "c1" with a managed topology at version "v1.31.0" is created
    Then the Cluster "c1" has neither an infrastructure cluster nor a control plane
    And the ConfigMap "c1-ext-test-extension-hookresponses" records "BeforeClusterCreate-actualResponseStatus" as "Status: Success, RetryAfterSeconds: 15"
