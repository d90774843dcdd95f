@rollout_deployment @seed_004
Feature: The lifecycleHooks API
  spec.lifecycleHooks holds the seed's LifecycleHook types in JSON (seed 004 "API Objects"). Hooks are
  defaulted and validated at admission; a refusal is 422 Invalid naming the field.

  # DESIGN.md "Rollout decisions": the defaults the seed does not give.
  @must @RH_API_001
  Scenario: A hook without policies gets failurePolicy Abort, retainPolicy Always and trigger type ProgressAvailable
    When a Deployment "web" with these lifecycle hooks is created:
      | hook  | point |
      | check | 50%   |
    Then the write is accepted
    And the Deployment "web" has the hook "check" with failurePolicy "Abort", retainPolicy "Always" and trigger type "ProgressAvailable"

  @must @RH_API_002
  Scenario Outline: A hook with <what> is refused at admission, naming the field
    When a Deployment "web" with these lifecycle hooks is created:
      | hook   | point   | policy   | retain   | trigger   | restart   | containers   |
      | first  | 1       |          |          |           |           |              |
      | <name> | <point> | <policy> | <retain> | <trigger> | <restart> | <containers> |
    Then the write is refused with 422 "Invalid" and the message:
      """
      Deployment.apps "web" is invalid: <field>: <message>
      """

    Examples:
      | case          | what                       | name   | point | policy | retain    | trigger | restart | containers | field                                                                | message                                                                          |
      | duplicate     | a name already used        | first  | 2     |        |           |         |         |            | spec.lifecycleHooks[1].name                                          | Duplicate value: "first"                                                         |
      | past-replicas | a point past the replicas  | second | 4     |        |           |         |         |            | spec.lifecycleHooks[1].trigger.progressAvailableParams.progressPoint | Invalid value: 4: must be between 0 and 3 (spec.replicas), inclusive             |
      | over-100      | a point over 100%          | second | 150%  |        |           |         |         |            | spec.lifecycleHooks[1].trigger.progressAvailableParams.progressPoint | Invalid value: "150%": must be between 0% and 100%, inclusive                    |
      | no-point      | no progress point          | second | -     |        |           |         |         |            | spec.lifecycleHooks[1].trigger.progressAvailableParams               | Required value                                                                   |
      | policy        | an unknown failurePolicy   | second | 2     | Retry  |           |         |         |            | spec.lifecycleHooks[1].failurePolicy                                 | Unsupported value: "Retry": supported values: "Abort", "Ignore"                  |
      | retain        | an unknown retainPolicy    | second | 2     |        | Sometimes |         |         |            | spec.lifecycleHooks[1].retainPolicy                                  | Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never" |
      | trigger       | an unknown trigger type    | second | 2     |        |           | Timer   |         |            | spec.lifecycleHooks[1].trigger.type                                  | Unsupported value: "Timer": supported values: "ProgressAvailable"                |
      | restart       | a Job that restarts always | second | 2     |        |           |         | Always  |            | spec.lifecycleHooks[1].jobSpec.template.spec.restartPolicy           | Unsupported value: "Always": supported values: "OnFailure", "Never"              |
      | no-containers | a Job without containers   | second | 2     |        |           |         |         | none       | spec.lifecycleHooks[1].jobSpec.template.spec.containers              | Required value                                                                   |

  @must @RH_DEP_002
  Scenario: maxUnavailable may not be 0 when maxSurge is 0
    When a Deployment "web" with maxSurge "0" and maxUnavailable "0%" is created
    Then the write is refused with 422 "Invalid"
    And the refusal names the field "spec.strategy.rollingUpdate.maxUnavailable" as "may not be 0 when `maxSurge` is 0"
