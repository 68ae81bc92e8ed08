// A small i18n layer: t('key', {n: 1}) looks the key up in the chosen
// language (English when missing), {name} placeholders filled.  The choice
// is reactive and remembered in localStorage ('xxl.lang').
import { ref } from 'vue'

const messages = {
  en: {
    'app.title': 'xxl console',
    'lang.switch': '中文',
    'nav.dashboard': 'Dashboard', 'nav.jobs': 'Jobs', 'nav.groups': 'Executors', 'nav.logs': 'Run logs',
    'nav.agents': 'Agents', 'nav.users': 'Users & tokens', 'nav.audit': 'Audit',
    'login.title': 'Sign in to xxl', 'login.username': 'User name', 'login.password': 'Password',
    'login.submit': 'Sign in', 'login.failed': 'Sign-in failed',
    'top.logout': 'Sign out', 'top.password': 'Change password', 'top.role': 'role',
    'pw.old': 'Current password', 'pw.new': 'New password', 'pw.repeat': 'New password again',
    'pw.mismatch': 'The new passwords differ', 'pw.changed': 'Password changed',
    'common.search': 'Search', 'common.add': 'Add', 'common.edit': 'Edit', 'common.remove': 'Remove',
    'common.save': 'Save', 'common.cancel': 'Cancel', 'common.close': 'Close', 'common.ok': 'OK',
    'common.all': 'All', 'common.actions': 'Actions', 'common.loading': 'Loading…', 'common.none': 'Nothing here',
    'common.prev': 'Previous', 'common.next': 'Next', 'common.page': 'Page {n}', 'common.total': '{n} in all',
    'common.confirmRemove': 'Remove {what}?', 'common.done': 'Done', 'common.refresh': 'Refresh',
    'common.yes': 'yes', 'common.no': 'no', 'common.time': 'Time', 'common.id': 'ID',
    'dash.jobs': 'Jobs', 'dash.running': '{n} running', 'dash.groups': 'Executors', 'dash.agents': 'Agents online',
    'dash.runs': 'Runs', 'dash.suc': 'Succeeded', 'dash.fail': 'Failed', 'dash.rate': 'Success rate',
    'dash.perDay': 'Runs per day', 'dash.share': 'Outcome of runs', 'dash.inProgress': 'Running',
    'group.appname': 'AppName', 'group.title': 'Name', 'group.addressType': 'Registration',
    'group.auto': 'Automatic', 'group.manual': 'Manual', 'group.addressList': 'Addresses',
    'group.registry': 'Registered now', 'group.add': 'Add executor', 'group.edit': 'Edit executor',
    'group.addressHint': 'comma-separated, required when manual', 'group.online': 'Online addresses',
    'job.group': 'Executor', 'job.desc': 'Description', 'job.author': 'Author', 'job.status': 'Status',
    'job.handler': 'JobHandler', 'job.running': 'Running', 'job.stopped': 'Stopped',
    'job.add': 'Add job', 'job.edit': 'Edit job {id}', 'job.base': 'Basics', 'job.schedule': 'Schedule',
    'job.task': 'Task', 'job.advanced': 'Advanced',
    'job.scheduleType': 'Schedule type', 'job.scheduleConf': 'Cron / seconds', 'job.timezone': 'Time zone',
    'job.misfire': 'Misfire strategy', 'job.route': 'Route strategy', 'job.param': 'Job parameter',
    'job.block': 'Block strategy', 'job.timeout': 'Timeout (s)', 'job.retry': 'Retries on failure',
    'job.retryInterval': 'Retry interval (s)', 'job.retryBackoff': 'Retry backoff', 'job.retryMax': 'Longest retry wait (s)',
    'job.glueType': 'Run mode', 'job.glueRemark': 'GLUE remark', 'job.child': 'Child job ids',
    'job.alarm': 'Alarm targets', 'job.startNow': 'Start at once', 'job.preview': 'Next fire times',
    'job.previewZone': 'in {tz}', 'job.previewNone': 'No fire time', 'job.glueSource': 'GLUE source',
    'job.trigger': 'Run once', 'job.start': 'Start', 'job.stop': 'Stop', 'job.copy': 'Copy', 'job.glue': 'GLUE IDE',
    'job.logs': 'Logs', 'job.next': 'Next times', 'job.registry': 'Addresses',
    'job.triggerTitle': 'Run job {id} once', 'job.address': 'Machine addresses',
    'job.addressHint': 'comma-separated; empty: the executor\'s', 'job.shard': 'Shard (I/N)',
    'job.triggered': 'Triggered: run {ids}', 'job.copyTitle': 'Copy job {id}', 'job.copied': 'Copied as job {id}',
    'job.lastNext': 'Next fire', 'job.saved': 'Saved', 'job.zoneUtc': 'UTC (empty)',
    'glue.title': 'GLUE IDE · job {id}', 'glue.versions': 'Versions', 'glue.version': 'Version',
    'glue.remark': 'Remark', 'glue.save': 'Save as new version', 'glue.rollback': 'Roll back',
    'glue.diff': 'Diff', 'glue.view': 'View', 'glue.compare': 'Compare', 'glue.with': 'with',
    'glue.rolled': 'Rolled back to version {v} (saved as version {n})', 'glue.saved': 'Saved',
    'glue.confirmRollback': 'Roll back to version {v}?', 'glue.size': '{n} bytes',
    'glue.notGlue': 'This job runs a BEAN handler: it has no GLUE source.', 'glue.remarkNeeded': 'Give a remark',
    'log.job': 'Job', 'log.status': 'Status', 'log.from': 'From', 'log.to': 'To',
    'log.ok': 'Success', 'log.failed': 'Failure', 'log.running': 'Running',
    'log.triggerTime': 'Trigger time', 'log.triggerCode': 'Trigger result', 'log.triggerMsg': 'Trigger note',
    'log.handleTime': 'Run end', 'log.handleCode': 'Run result', 'log.handleMsg': 'Run note',
    'log.detail': 'Log', 'log.kill': 'Kill', 'log.clear': 'Clear logs', 'log.address': 'Executor address',
    'log.type': 'Trigger type', 'log.tail': 'Run log', 'log.tailing': 'following the log…', 'log.ended': 'end of log',
    'log.killed': 'Kill sent', 'log.clearKind': 'Which', 'log.beforeDays': 'Older than N days',
    'log.keepLast': 'All but the newest N', 'log.all': 'All of them', 'log.cleared': '{n} rows removed',
    'log.title': 'Run {id}', 'log.retrying': 'waiting for the agent: {msg}', 'log.param': 'Parameter',
    'agent.app': 'AppName', 'agent.address': 'Address', 'agent.updateTime': 'Last registration',
    'agent.handlers': 'Handlers', 'agent.connected': 'Connected',
    'user.users': 'Users', 'user.tokens': 'API tokens', 'user.name': 'User name', 'user.role': 'Role',
    'user.apps': 'Apps', 'user.appsHint': 'comma-separated; empty: all', 'user.added': 'Added',
    'user.password': 'Password', 'user.passwordKeep': 'empty: keep', 'user.add': 'Add user', 'user.edit': 'Edit user {name}',
    'token.name': 'Name', 'token.add': 'Add token', 'token.shown': 'The token, shown once — copy it now:',
    'audit.who': 'Who', 'audit.role': 'Role', 'audit.type': 'Request', 'audit.target': 'Target', 'audit.code': 'Code',
    'audit.more': 'Older',
  },
  zh: {
    'app.title': 'xxl 调度中心',
    'lang.switch': 'English',
    'nav.dashboard': '运行报表', 'nav.jobs': '任务管理', 'nav.groups': '执行器管理', 'nav.logs': '调度日志',
    'nav.agents': '执行器节点', 'nav.users': '用户与令牌', 'nav.audit': '操作审计',
    'login.title': '登录 xxl 调度中心', 'login.username': '账号', 'login.password': '密码',
    'login.submit': '登录', 'login.failed': '登录失败',
    'top.logout': '注销', 'top.password': '修改密码', 'top.role': '角色',
    'pw.old': '原密码', 'pw.new': '新密码', 'pw.repeat': '确认新密码',
    'pw.mismatch': '两次输入的新密码不一致', 'pw.changed': '密码已修改',
    'common.search': '搜索', 'common.add': '新增', 'common.edit': '编辑', 'common.remove': '删除',
    'common.save': '保存', 'common.cancel': '取消', 'common.close': '关闭', 'common.ok': '确定',
    'common.all': '全部', 'common.actions': '操作', 'common.loading': '加载中…', 'common.none': '暂无数据',
    'common.prev': '上一页', 'common.next': '下一页', 'common.page': '第 {n} 页', 'common.total': '共 {n} 条',
    'common.confirmRemove': '确认删除 {what}？', 'common.done': '操作成功', 'common.refresh': '刷新',
    'common.yes': '是', 'common.no': '否', 'common.time': '时间', 'common.id': 'ID',
    'dash.jobs': '任务数量', 'dash.running': '运行中 {n}', 'dash.groups': '执行器数量', 'dash.agents': '在线节点',
    'dash.runs': '调度次数', 'dash.suc': '成功', 'dash.fail': '失败', 'dash.rate': '成功率',
    'dash.perDay': '每日调度次数', 'dash.share': '调度结果分布', 'dash.inProgress': '进行中',
    'group.appname': 'AppName', 'group.title': '名称', 'group.addressType': '注册方式',
    'group.auto': '自动注册', 'group.manual': '手动录入', 'group.addressList': '机器地址',
    'group.registry': '当前注册', 'group.add': '新增执行器', 'group.edit': '编辑执行器',
    'group.addressHint': '多个地址逗号分隔，手动录入时必填', 'group.online': '在线机器地址',
    'job.group': '执行器', 'job.desc': '任务描述', 'job.author': '负责人', 'job.status': '状态',
    'job.handler': 'JobHandler', 'job.running': '运行', 'job.stopped': '停止',
    'job.add': '新增任务', 'job.edit': '编辑任务 {id}', 'job.base': '基础配置', 'job.schedule': '调度配置',
    'job.task': '任务配置', 'job.advanced': '高级配置',
    'job.scheduleType': '调度类型', 'job.scheduleConf': 'Cron / 秒数', 'job.timezone': '时区',
    'job.misfire': '调度过期策略', 'job.route': '路由策略', 'job.param': '任务参数',
    'job.block': '阻塞处理策略', 'job.timeout': '任务超时时间（秒）', 'job.retry': '失败重试次数',
    'job.retryInterval': '重试间隔（秒）', 'job.retryBackoff': '重试退避倍数', 'job.retryMax': '最长重试间隔（秒）',
    'job.glueType': '运行模式', 'job.glueRemark': 'GLUE 备注', 'job.child': '子任务ID',
    'job.alarm': '报警目标', 'job.startNow': '立即启动', 'job.preview': '最近触发时间',
    'job.previewZone': '时区 {tz}', 'job.previewNone': '无触发时间', 'job.glueSource': 'GLUE 源码',
    'job.trigger': '执行一次', 'job.start': '启动', 'job.stop': '停止', 'job.copy': '复制', 'job.glue': 'GLUE IDE',
    'job.logs': '查询日志', 'job.next': '下次执行时间', 'job.registry': '注册节点',
    'job.triggerTitle': '执行一次任务 {id}', 'job.address': '机器地址',
    'job.addressHint': '多个地址逗号分隔；为空则使用执行器地址', 'job.shard': '分片（I/N）',
    'job.triggered': '已触发：日志 {ids}', 'job.copyTitle': '复制任务 {id}', 'job.copied': '已复制为任务 {id}',
    'job.lastNext': '下次触发', 'job.saved': '保存成功', 'job.zoneUtc': 'UTC（为空）',
    'glue.title': 'GLUE IDE · 任务 {id}', 'glue.versions': '版本历史', 'glue.version': '版本',
    'glue.remark': '备注', 'glue.save': '保存为新版本', 'glue.rollback': '回滚',
    'glue.diff': '对比', 'glue.view': '查看', 'glue.compare': '对比', 'glue.with': '与',
    'glue.rolled': '已回滚到版本 {v}（保存为版本 {n}）', 'glue.saved': '保存成功',
    'glue.confirmRollback': '确认回滚到版本 {v}？', 'glue.size': '{n} 字节',
    'glue.notGlue': '该任务为 BEAN 模式，没有 GLUE 源码。', 'glue.remarkNeeded': '请输入备注',
    'log.job': '任务', 'log.status': '状态', 'log.from': '开始时间', 'log.to': '结束时间',
    'log.ok': '成功', 'log.failed': '失败', 'log.running': '进行中',
    'log.triggerTime': '调度时间', 'log.triggerCode': '调度结果', 'log.triggerMsg': '调度备注',
    'log.handleTime': '执行时间', 'log.handleCode': '执行结果', 'log.handleMsg': '执行备注',
    'log.detail': '执行日志', 'log.kill': '终止任务', 'log.clear': '清理日志', 'log.address': '执行器地址',
    'log.type': '触发类型', 'log.tail': '执行日志', 'log.tailing': '日志跟踪中…', 'log.ended': '日志结束',
    'log.killed': '已发送终止', 'log.clearKind': '清理方式', 'log.beforeDays': '清理 N 天之前的日志',
    'log.keepLast': '只保留最近 N 条', 'log.all': '清理所有日志', 'log.cleared': '已删除 {n} 条',
    'log.title': '调度日志 {id}', 'log.retrying': '等待执行器：{msg}', 'log.param': '任务参数',
    'agent.app': 'AppName', 'agent.address': '地址', 'agent.updateTime': '最近注册时间',
    'agent.handlers': 'JobHandler 列表', 'agent.connected': '在线',
    'user.users': '用户', 'user.tokens': 'API 令牌', 'user.name': '账号', 'user.role': '角色',
    'user.apps': '执行器权限', 'user.appsHint': '多个逗号分隔；为空则全部', 'user.added': '创建时间',
    'user.password': '密码', 'user.passwordKeep': '为空则不修改', 'user.add': '新增用户', 'user.edit': '编辑用户 {name}',
    'token.name': '名称', 'token.add': '新增令牌', 'token.shown': '令牌只显示这一次，请立即复制：',
    'audit.who': '操作人', 'audit.role': '角色', 'audit.type': '请求', 'audit.target': '对象', 'audit.code': '结果码',
    'audit.more': '更早',
  },
}

function initial() {
  try {
    const saved = localStorage.getItem('xxl.lang')
    if (saved && messages[saved]) return saved
  } catch { /* storage off */ }
  return (navigator.language || '').toLowerCase().startsWith('zh') ? 'zh' : 'en'
}

export const lang = ref(initial())
document.documentElement.lang = lang.value === 'zh' ? 'zh-CN' : 'en'

export function setLang(l) {
  lang.value = messages[l] ? l : 'en'
  document.documentElement.lang = lang.value === 'zh' ? 'zh-CN' : 'en'
  try { localStorage.setItem('xxl.lang', lang.value) } catch { /* storage off */ }
}

export function t(key, vars) {
  let s = messages[lang.value][key] ?? messages.en[key] ?? key
  if (vars) s = s.replace(/\{(\w+)\}/g, (m, k) => (k in vars ? String(vars[k]) : m))
  return s
}

export const keysOf = (l) => Object.keys(messages[l])
